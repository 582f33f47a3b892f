"""One source discovery for `golden ingest` and the flow (datasets/sources/discovery.py):
the same files, the same URL schemes, the same credential-free names, date templates."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import fsspec
import pytest

from golden_distill.datasets.sources.base import SourceError
from golden_distill.datasets.sources.discovery import discover, discover_shards, shard_label
from golden_distill.datasets.sources.partitions import TemplateError, expand_template
from golden_distill.datasets.sources.uris import display_uri, expand_source

LINE = b'{"recordId": "r-1"}\n'


def test_folder_yields_every_recording_suffix_ingest_reads(tmp_path: Path):
    (tmp_path / "a.ndjson.gz").write_bytes(gzip.compress(LINE))
    (tmp_path / "b.jsonl.zst").write_bytes(b"x")
    (tmp_path / "c.json.zst").write_bytes(b"x")
    (tmp_path / "_truth.json").write_text("{}")
    names = sorted(Path(s.uri).name for s in discover_shards([str(tmp_path)]))
    # the flow used to skip a.ndjson.gz (and the zst JSON) that `golden ingest` reads
    assert names == ["a.ndjson.gz", "b.jsonl.zst", "c.json.zst"]
    assert names == sorted(Path(u).name for u in expand_source(str(tmp_path)))


def test_fsspec_urls_are_sources_and_fingerprinted():
    fs = fsspec.filesystem("memory")
    fs.pipe("/golden-discovery/dt=2026-11-28/x.jsonl", LINE)
    fs.pipe("/golden-discovery/dt=2026-11-29/x.jsonl", LINE + LINE)
    try:
        shards = discover_shards(["memory://golden-discovery/dt={date}/"],
                                 since=datetime(2026, 11, 28, tzinfo=UTC),
                                 until=datetime(2026, 11, 30, tzinfo=UTC))  # fmt: skip
        assert [s.label for s in shards] == ["dt=2026-11-28/x.jsonl", "dt=2026-11-29/x.jsonl"]
        assert all(s.uri.startswith("memory://") for s in shards)
        assert shards[0].fingerprint != shards[1].fingerprint and shards[1].size == 2 * len(LINE)
    finally:
        fs.rm("/golden-discovery", recursive=True)


def test_database_passwords_never_shown_by_any_rule():
    for url in (
        "postgresql://bob:s3cr3t-pw@db.internal:5432/rec",
        "postgresql://db.internal/rec?user=bob&password=s3cr3t-pw",
        "sqlite:///tmp/x.db?token=s3cr3t-pw",
    ):
        (shard,) = discover_shards([url])
        assert shard.fingerprint is None  # a database: never cached
        for shown in (shard.label, display_uri(url), shard_label(url)):
            assert "s3cr3t-pw" not in shown and "bob:" not in shown


def test_date_templates_cover_the_window():
    since, until = datetime(2026, 11, 28, 22, tzinfo=UTC), datetime(2026, 11, 29, 2, tzinfo=UTC)
    assert expand_template("r/dt={date}/", since, until) == ["r/dt=2026-11-28/", "r/dt=2026-11-29/"]
    hours = expand_template("r/{date}/{hour}.jsonl", since, until)
    assert hours == [f"r/2026-11-{d}/{h}.jsonl" for d, h in
                     (("28", "22"), ("28", "23"), ("29", "00"), ("29", "01"))]  # fmt: skip
    with pytest.raises(TemplateError, match="needs a window"):
        expand_template("r/dt={date}/", None, None)


def test_missing_partitions_are_listed_and_all_missing_is_an_error(tmp_path: Path):
    (tmp_path / "dt=2026-11-29").mkdir()
    (tmp_path / "dt=2026-11-29" / "x.jsonl").write_bytes(LINE)
    template = str(tmp_path / "dt={date}")
    found = discover([template], since=datetime(2026, 11, 28, tzinfo=UTC),
                     until=datetime(2026, 11, 30, tzinfo=UTC))  # fmt: skip
    assert [s.label for s in found.shards] == ["dt=2026-11-29/x.jsonl"]
    assert found.missing_partitions == [str(tmp_path / "dt=2026-11-28")]
    with pytest.raises(SourceError, match="no partition exists"):
        discover([template], since=datetime(2026, 12, 5, tzinfo=UTC),
                 until=datetime(2026, 12, 6, tzinfo=UTC))  # fmt: skip


def test_files_picked_by_modification_time(tmp_path: Path):
    import os

    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_bytes(LINE)
    new.write_bytes(LINE)
    os.utime(old, (datetime(2026, 11, 1, tzinfo=UTC).timestamp(),) * 2)
    os.utime(new, (datetime(2026, 11, 28, 5, tzinfo=UTC).timestamp(),) * 2)
    found = discover([str(tmp_path)], since=datetime(2026, 11, 28, tzinfo=UTC),
                     until=datetime(2026, 11, 29, tzinfo=UTC), by_mtime=True)  # fmt: skip
    assert [s.label for s in found.shards] == ["new.jsonl"] and found.skipped_by_mtime == 1


def test_new_files_hashed_at_once_keep_their_order_and_digests(tmp_path: Path):
    import hashlib

    files = []
    for n in range(7):  # several files: hashed in threads
        f = tmp_path / f"r{n}.jsonl"
        f.write_bytes(LINE * (n + 1) * 1000)
        files.append(f)
    memo = tmp_path / "work" / "fingerprints.json"
    mixed = [str(files[3])]
    discover_shards(mixed, memo=memo)  # one memoised, six hashed now
    shards = discover_shards([str(f) for f in files], memo=memo)
    assert [Path(s.uri).name for s in shards] == [f.name for f in files]
    assert [s.fingerprint for s in shards] == [
        hashlib.sha256(f.read_bytes()).hexdigest() for f in files
    ]
    assert [s.size for s in shards] == [f.stat().st_size for f in files]
