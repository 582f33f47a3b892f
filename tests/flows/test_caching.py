"""Shard cache keys and shard discovery: what invalidates a cached shard, and what does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_distill.datasets.sources.base import SourceError
from golden_distill.datasets.sources.discovery import discover_shards
from golden_distill.datasets.sources.uris import display_uri
from golden_distill.flows.caching import (
    code_digest,
    installed_code_folders,
    output_code_files,
    pipeline_version,
    shard_cache_key,
    shard_config_sha256,
)
from golden_distill.flows.config import PipelineConfig


def expand_sources(sources: list[str]) -> list[str]:
    return [shard.uri for shard in discover_shards(sources)]


BASE = {
    "fingerprint": "a" * 64,
    "config_sha256": "c" * 64,
    "version": "0.1.0+abc",
    "window": (None, None),
}


@pytest.mark.parametrize(
    "change",
    [
        {"fingerprint": "b" * 64},
        {"config_sha256": "d" * 64},
        {"version": "0.1.0+abd"},
        {"window": ("2026-11-28T00:00:00+00:00", None)},
    ],
)
def test_every_input_of_the_key_changes_it(change):
    assert shard_cache_key(**BASE) != shard_cache_key(**{**BASE, **change})
    assert shard_cache_key(**BASE) == shard_cache_key(**dict(BASE))


def test_redaction_key_covers_chosen_ids_and_pseudonym_key():
    from golden_distill.flows.tasks.redact import redact_cache_key

    base = redact_cache_key("s" * 64, ("c_1", "c_2"), "k_1")
    assert base == redact_cache_key("s" * 64, ("c_1", "c_2"), "k_1")
    assert base != redact_cache_key("s" * 64, ("c_1", "c_3"), "k_1")
    assert base != redact_cache_key("s" * 64, ("c_1", "c_2"), "k_2")
    assert base != redact_cache_key("t" * 64, ("c_1", "c_2"), "k_1")
    assert redact_cache_key(None, ("c_1",), "k_1") is None  # uncacheable shard


def test_run_and_publish_settings_do_not_invalidate_shards():
    base = PipelineConfig()
    moved = PipelineConfig.model_validate(
        {"run": {"task_runner": "dask", "max_parallel_shards": 8}, "publish": {"set_name": "x"}}
    )
    assert shard_config_sha256(base) == shard_config_sha256(moved)
    changed = PipelineConfig.model_validate({"ingest": {"batch_rows": 17}})
    assert shard_config_sha256(base) != shard_config_sha256(changed)


def test_pipeline_version_names_package_and_code():
    version = pipeline_version()
    assert version.startswith("0.") and "+" in version


def _copy_code(tmp_path: Path) -> dict[str, Path]:
    """A copy of the installed code folders, to edit without touching the checkout."""
    import shutil

    folders = {}
    for name, root in installed_code_folders().items():
        folders[name] = tmp_path / name
        shutil.copytree(root, folders[name], ignore=shutil.ignore_patterns("__pycache__"))
    return folders


def test_code_digest_covers_only_code_that_shapes_output(tmp_path: Path):
    folders = _copy_code(tmp_path)
    names = [relative for relative, _ in output_code_files(folders)]
    assert "filters/runner.py" in names and "flows/tasks/publish.py" in names
    assert not any(n.startswith(("synthetic/", "flows/cli/", "flows/review_app/")) for n in names)
    before = code_digest(output_code_files(folders))

    # help text of a command and the generator (not even a hashed folder) keep the caches
    help_module = folders["flows"] / "cli" / "run.py"
    help_module.write_text(help_module.read_text() + "\n# reworded help\n")
    assert code_digest(output_code_files(folders)) == before

    # a funnel's code shapes the published set: it changes the version
    funnel = folders["filters"] / "runner.py"
    funnel.write_text(funnel.read_text() + "\n# changed\n")
    assert code_digest(output_code_files(folders)) != before


def test_generator_is_not_hashed_into_the_pipeline_version():
    assert "synthetic" not in installed_code_folders()


def test_folder_sources_skip_truth_and_hidden_files(tmp_path: Path):
    (tmp_path / "recordings-0000.jsonl").write_text("{}\n")
    (tmp_path / "recordings-0001.jsonl.gz").write_bytes(b"x")
    (tmp_path / "_truth.json").write_text("{}")
    (tmp_path / ".hidden.jsonl").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    found = [Path(p).name for p in expand_sources([str(tmp_path)])]
    assert found == ["recordings-0000.jsonl", "recordings-0001.jsonl.gz"]
    globbed = expand_sources([str(tmp_path / "recordings-*.jsonl"), str(tmp_path)])
    assert len(globbed) == 2  # each input once


def test_missing_sources_are_errors(tmp_path: Path):
    with pytest.raises(SourceError, match="no such file"):
        expand_sources([str(tmp_path / "nope.jsonl")])
    with pytest.raises(SourceError, match="no recording"):
        expand_sources([str(tmp_path)])
    with pytest.raises(SourceError, match="matches no file"):
        expand_sources([str(tmp_path / "*.jsonl")])


def test_fingerprint_follows_content_not_name_or_time(tmp_path: Path):
    a = tmp_path / "a.jsonl"
    a.write_text('{"x": 1}\n')
    first = discover_shards([str(a)])[0].fingerprint
    a.write_text('{"x": 1}\n')
    assert discover_shards([str(a)])[0].fingerprint == first
    a.write_text('{"x": 2}\n')
    assert discover_shards([str(a)])[0].fingerprint != first


def test_fingerprint_memo_rehashes_only_changed_files(tmp_path: Path, monkeypatch):
    import golden_distill.datasets.sources.discovery as source_files

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("1\n")
    b.write_text("2\n")
    memo = tmp_path / "work" / "fingerprints.json"
    first = discover_shards([str(a), str(b)], memo=memo)
    hashed: list[str] = []
    real = source_files._content_sha256
    monkeypatch.setattr(
        source_files,
        "_content_sha256",
        lambda fs, p: hashed.append(Path(p).name) or real(fs, p),
    )
    assert discover_shards([str(a), str(b)], memo=memo) == first
    assert hashed == []  # nothing changed: nothing read
    b.write_text("22\n")
    again = discover_shards([str(a), str(b)], memo=memo)
    assert hashed == ["b.jsonl"]
    assert again[0] == first[0] and again[1].fingerprint != first[1].fingerprint


def test_database_urls_are_uncached_shards_shown_without_credentials():
    shards = discover_shards(["postgresql://bob:secret@db.internal:5432/rec"])
    assert shards[0].fingerprint is None
    assert "secret" not in shards[0].label and "bob" not in shards[0].label
    assert display_uri("sqlite:///tmp/x.db") == "sqlite:///tmp/x.db"
