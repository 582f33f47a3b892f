"""A failed run is never visible and a visible version is never a failed run: `golden run` exits 0
with its version when something after the rename fails (the report link), leaves nothing when
something before it fails, and refuses a set name with a line break before writing anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.verify import verify_version
from golden_distill.datasets.store.versions import list_versions

runner = CliRunner()


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from golden_distill.synthetic import generate_corpus

    out = tmp_path_factory.mktemp("small-corpus")
    generate_corpus(out, sessions=30, seed=5, shards=1)
    return out


def _run(tmp_path: Path, corpus: Path, write_config, set_name: str, *extra: str):
    from golden_distill.flows.cli import app

    config = write_config(tmp_path / "config.yaml", "tenant-none")
    args = ["run", "--config", str(config), "--source", str(corpus), "--format", "native"]
    args += ["--store", str(tmp_path / "store"), "--set", set_name, *extra]
    return runner.invoke(app, args)


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_report_link_failing_after_the_rename_still_succeeds_with_the_version(
    prefect_api, pseudonym_key, tmp_path, small_corpus, write_config, monkeypatch
):
    from golden_distill.flows.tasks import publish as publish_task

    def broken(*args, **kwargs):
        raise RuntimeError("artifact API down")

    monkeypatch.setattr(publish_task, "create_markdown_artifact", broken)
    result = _run(tmp_path, small_corpus, write_config, "vis")
    assert result.exit_code == 0, result.output
    store = StoreFS(str(tmp_path / "store"))
    versions = list_versions(store, "vis")
    assert len(versions) == 1 and f"published version: {versions[0]}" in result.output
    assert (tmp_path / "store" / "vis" / "refs" / "latest").read_text() == f"{versions[0]}\n"
    assert verify_version(store, "vis", versions[0]).ok


def test_a_failure_before_the_rename_leaves_nothing_visible(
    prefect_api, pseudonym_key, tmp_path, small_corpus, write_config, monkeypatch
):
    from golden_distill.flows.errors import STAGES
    from golden_distill.flows.tasks import publish as publish_task

    def broken(stats):
        raise RuntimeError("template missing")

    monkeypatch.setattr(publish_task, "render_report", broken)
    result = _run(tmp_path, small_corpus, write_config, "vis")
    assert result.exit_code == 1
    stage = result.output.split("stage '", 1)[1].split("'", 1)[0]
    assert stage in STAGES
    store = StoreFS(str(tmp_path / "store"))
    assert list_versions(store, "vis") == []
    set_dir = tmp_path / "store" / "vis"
    assert not (set_dir / "refs" / "latest").exists()
    assert not [p for p in _files(set_dir) if "versions" in p.parts or "_staging" in p.parts]


@pytest.mark.parametrize("name", ["nl\n", "cr\r", "tab\tx", "a\u2215b", "dot\uff0eset", "../up"])
def test_a_set_name_that_is_not_a_plain_name_is_refused_before_any_file(
    prefect_api, pseudonym_key, tmp_path, small_corpus, write_config, name
):
    result = _run(tmp_path, small_corpus, write_config, name)
    assert result.exit_code == 2
    assert "stage 'validate'" in result.output and "set name" in result.output
    assert _files(tmp_path / "store") == []


def test_an_erased_user_does_not_come_back_in_a_later_run(
    prefect_api, pseudonym_key, tmp_path, small_corpus, write_config
):
    """Real redaction made the pseudonyms; `golden erase` derives the same ones from the raw id;
    a forced rerun over the same recordings (the user's cases selected again) leaves them out."""
    import json

    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.cli import app
    from golden_distill.flows.config import load_pipeline_config
    from golden_distill.redaction.key_rules import RuleMatcher
    from golden_distill.redaction.pseudonym import key_pseudonym

    assert _run(tmp_path, small_corpus, write_config, "erase-me").exit_code == 0
    store_url = str(tmp_path / "store")
    first = open_set(store_url, "erase-me")
    published = first.read_table().column("user_id").to_pylist()
    rule = RuleMatcher(load_pipeline_config(None).redaction).match(("user_id",))
    raw_users = set()
    for path in small_corpus.glob("recordings-*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                raw_users.add(json.loads(line)["userId"])
            except (ValueError, KeyError, TypeError):
                continue  # the generator plants broken lines

    pseudonym = {key_pseudonym(u, rule.key_type, pseudonym_key.encode(), rule.prefix): u
                 for u in raw_users}  # fmt: skip
    victim_pseudonym = next(p for p in published if p in pseudonym)
    victim = pseudonym[victim_pseudonym]

    erase = CliRunner().invoke(
        app, ["erase", "--store", store_url, "--set", "erase-me", "--subject", f"user_id={victim}"]
    )
    assert erase.exit_code == 0, erase.output
    assert victim not in erase.output and victim_pseudonym not in erase.output
    after = open_set(store_url, "erase-me")
    assert after.version != first.version
    assert victim_pseudonym not in after.read_table().column("user_id").to_pylist()

    rerun = _run(tmp_path, small_corpus, write_config, "erase-me", "--force")
    assert rerun.exit_code == 0, rerun.output
    latest = open_set(store_url, "erase-me")
    assert latest.version not in (first.version, after.version)
    text = json.dumps(latest.read_table().to_pylist(), default=str)
    assert victim_pseudonym not in text and victim not in text
    assert latest.manifest["erasure"]["cases_dropped"] >= 1
