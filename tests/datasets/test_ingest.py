"""`ingest()` and `golden ingest`: shards, quarantine, summary, format detection, exit codes."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path
from typing import Any

import fsspec
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from typer.testing import CliRunner

from golden_distill.datasets.case import Case
from golden_distill.datasets.ingest import IngestError, ingest, ingest_table
from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.flows.cli import app

_SPEC = importlib.util.spec_from_file_location(
    "native_fixtures", Path(__file__).parent / "sources" / "test_native.py"
)
assert _SPEC is not None and _SPEC.loader is not None
native_fixtures = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(native_fixtures)
recording = native_fixtures.recording
SECRET = native_fixtures.SECRET


def _lines(ids: list[str], broken: dict[int, bytes] | None = None) -> bytes:
    out = [orjson.dumps(recording(i)) + b"\n" for i in ids]
    for index, raw in (broken or {}).items():
        out.insert(index, raw)
    return b"".join(out)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder of recordings: plain, gzip and zstd files, a truth file that must be ignored."""
    folder = tmp_path / "recordings"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(
        _lines(["a1", "a2", "a3"], {1: b'{"recordId": "bad", ' + SECRET.encode() + b"\n"})
    )
    (folder / "b.jsonl.gz").write_bytes(
        gzip.compress(
            _lines(["b1", "b2"], {0: orjson.dumps(recording("b0", turnIndex="x")) + b"\n"})
        )
    )
    (folder / "c.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(_lines([f"c{i}" for i in range(5)]))
    )
    (folder / "_truth.json").write_text('{"not": "a recording"}')
    return folder


def _case_ids(out: Path) -> list[str]:
    rows: list[dict[str, Any]] = []
    for shard in sorted((out / "cases").glob("*.parquet")):
        table = pq.read_table(shard)
        assert table.schema.equals(CASE_SCHEMA, check_metadata=False)
        rows.extend(table.to_pylist())
    return [Case.from_row(r).source.source_record_id for r in rows]


def test_ingest_writes_shards_quarantine_and_summary(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = ingest([str(corpus)], out, config=IngestConfig(batch_rows=2, rows_per_shard=4))
    assert _case_ids(out) == ["a1", "a2", "a3", "b1", "b2", "c0", "c1", "c2", "c3", "c4"]
    assert summary.cases_written == 10 and len(summary.shards) == 3
    assert summary.quarantined == {"invalid_json": 1, "wrong_type": 1}
    assert summary.records_read == 12 == summary.cases_written + summary.quarantined_total
    assert summary.bytes_read == sum(p.stat().st_size for p in corpus.glob("[abc]*"))
    assert [s.format for s in summary.sources] == ["native"] * 3 and not summary.failed

    entries = read_quarantine(out / "quarantine.jsonl")
    located = {(Path(e["uri"]).name, e["position"], e["reason"]) for e in entries}
    assert located == {("a.jsonl", 2, "invalid_json"), ("b.jsonl.gz", 1, "wrong_type")}

    saved = json.loads((out / "summary.json").read_text())
    assert saved["cases_written"] == 10 and saved["records_read"] == 12
    assert saved["quarantined"] == {"invalid_json": 1, "wrong_type": 1}
    assert saved["shards"] == [f"cases/part-0000{i}.parquet" for i in range(3)]
    by_file = {Path(s["uri"]).name: s for s in saved["sources"]}
    assert by_file["b.jsonl.gz"]["quarantined"] == {"wrong_type": 1}
    assert by_file["c.jsonl.zst"]["cases"] == 5
    assert SECRET not in (out / "summary.json").read_text()


def test_ingest_table_keeps_the_same_cases_in_memory(corpus: Path, tmp_path: Path) -> None:
    """The flow's shard step reads with ``ingest_table``: the table ``ingest`` would have
    written (rows, order, schema), the same quarantine and counts, and no case files."""
    config = IngestConfig(batch_rows=2, rows_per_shard=4)
    written = ingest([str(corpus)], tmp_path / "files", config=config)
    table, summary = ingest_table([str(corpus)], tmp_path / "memory", config=config)
    on_disk = [pq.read_table(p, schema=CASE_SCHEMA) for p in written.shards]
    assert table.equals(pa.concat_tables(on_disk))
    assert table.schema.equals(CASE_SCHEMA, check_metadata=True)
    assert summary.cases_written == table.num_rows == 10 and summary.shards == []
    assert not (tmp_path / "memory" / "cases").exists()
    assert summary.quarantined == written.quarantined == {"invalid_json": 1, "wrong_type": 1}
    quarantined = read_quarantine(tmp_path / "memory" / "quarantine.jsonl")
    assert quarantined == read_quarantine(tmp_path / "files" / "quarantine.jsonl")
    assert json.loads((tmp_path / "memory" / "summary.json").read_text())["records_read"] == 12
    empty, nothing = ingest_table([str(tmp_path / "no-such.jsonl")], tmp_path / "none")
    assert empty.num_rows == 0 and empty.schema.equals(CASE_SCHEMA) and nothing.failed


def test_globs_and_fsspec_urls_are_sources(tmp_path: Path) -> None:
    fs = fsspec.filesystem("memory")
    fs.pipe("/ingest-test/x-1.jsonl", _lines(["m1", "m2"]))
    fs.pipe("/ingest-test/x-2.jsonl", _lines(["m3"]))
    (tmp_path / "local-1.jsonl").write_bytes(_lines(["l1"]))
    try:
        summary = ingest(
            ["memory://ingest-test/x-*.jsonl", str(tmp_path / "local-*.jsonl")], tmp_path / "out"
        )
    finally:
        fs.rm("/ingest-test", recursive=True)
    assert _case_ids(tmp_path / "out") == ["m1", "m2", "m3", "l1"]
    assert summary.sources[0].uri.startswith("memory://")
    assert summary.sources[0].uri.endswith("ingest-test/x-1.jsonl")


def test_unreadable_sources_are_reported_and_the_others_still_read(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(_lines(["g1"]))
    odd = tmp_path / "notes.jsonl"
    odd.write_text("hello, this is not a recording\n")
    summary = ingest([str(tmp_path / "missing.jsonl"), str(odd), str(good)], tmp_path / "out")
    assert summary.cases_written == 1
    errors = [s.error for s in summary.failed]
    assert len(errors) == 2
    assert "no such file" in errors[0]
    assert errors[1] == (
        f"could not recognise {odd}: not JSONL recordings, Chronicle envelopes, tau2 results, "
        "chat transcripts, evidence tables or OTLP JSON; pass --format"
    )


def test_explicit_format_skips_detection(tmp_path: Path) -> None:
    path = tmp_path / "odd-name.txt"
    path.write_bytes(b"garbage first line\n" + _lines(["x1"]))
    summary = ingest([str(path)], tmp_path / "out", fmt="native")
    assert summary.cases_written == 1 and summary.quarantined == {"invalid_json": 1}
    with pytest.raises(IngestError, match="unknown format"):
        ingest([str(path)], tmp_path / "out2", fmt="csv")


def test_existing_output_needs_overwrite(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ingest([str(corpus / "a.jsonl")], out)
    with pytest.raises(IngestError, match="--overwrite"):
        ingest([str(corpus / "a.jsonl")], out)
    summary = ingest([str(corpus / "c.jsonl.zst")], out, overwrite=True)
    assert summary.cases_written == 5 and _case_ids(out) == [f"c{i}" for i in range(5)]
    assert read_quarantine(out / "quarantine.jsonl") == []


def test_progress_reports_growing_counts(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_bytes(_lines([f"p{i}" for i in range(9)]))
    seen: list[tuple[int, int]] = []
    ingest(
        [str(tmp_path / "p.jsonl")],
        tmp_path / "out",
        config=IngestConfig(batch_rows=2),
        progress=lambda records, size: seen.append((records, size)),
    )
    assert len(seen) >= 5
    assert [r for r, _ in seen] == sorted(r for r, _ in seen) and seen[-1][0] == 9


def test_cli_prints_the_table_and_exits_zero_with_quarantined_records(
    corpus: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["ingest", str(corpus), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    for label in ("records read", "cases written", "invalid_json", "MB/s"):
        assert label in result.output
    assert SECRET not in result.output

    as_json = runner.invoke(
        app, ["ingest", str(corpus), "--out", str(tmp_path / "out"), "--overwrite", "--json"]
    )
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["cases_written"] == 10


def test_cli_exit_codes_for_unreadable_sources_and_bad_arguments(
    corpus: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    missing = runner.invoke(
        app, ["ingest", str(corpus), str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o1")]
    )
    assert missing.exit_code == 1 and "no such file" in missing.output
    assert json.loads((tmp_path / "o1" / "summary.json").read_text())["cases_written"] == 10
    bad_format = runner.invoke(app, ["ingest", str(corpus), "-o", str(tmp_path / "o2"), "-f", "x"])
    assert bad_format.exit_code == 2 and "unknown --format" in bad_format.output
    config = tmp_path / "bad.yaml"
    config.write_text("ingest:\n  max_line_byte: 5\n")
    bad_config = runner.invoke(
        app, ["ingest", str(corpus), "-o", str(tmp_path / "o3"), "--config", str(config)]
    )
    assert bad_config.exit_code == 2 and "did you mean max_line_bytes" in bad_config.output


def test_formats_are_recognised_per_file_and_row_adapters_share_the_shards(tmp_path: Path) -> None:
    (tmp_path / "native.jsonl").write_bytes(_lines(["n1", "n2"]))
    chat = {
        "id": "chat-1",
        "messages": [
            {"role": "user", "content": "where is my order?"},
            {"role": "assistant", "content": "Sorry, I cannot tell."},
        ],
    }
    (tmp_path / "transcripts.jsonl").write_bytes(orjson.dumps(chat) + b"\n")
    summary = ingest(
        [str(tmp_path / "native.jsonl"), str(tmp_path / "transcripts.jsonl")], tmp_path / "out"
    )
    assert [s.format for s in summary.sources] == ["native", "chat"]
    assert summary.cases_written == 3 and not summary.failed
    table = pq.read_table(summary.shards[0])
    assert [s["format"] for s in table.column("source").to_pylist()] == ["native"] * 2 + ["chat"]
