"""`ingest(..., jobs=N)`: worker processes and byte ranges give exactly the single-process output.

Compared with `jobs=1` on the same input: the cases (every column, incl. `source.position`),
the quarantine file byte for byte (entries, their true line numbers, their order) and the
counts. Range boundaries are forced onto the awkward places: a broken line exactly at a
boundary, an oversized line that nominal offsets fall inside.
"""

from __future__ import annotations

import gzip
import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets import ingest_parallel
from golden_distill.datasets.ingest import IngestError, ingest
from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.sources.byte_ranges import (
    RangeReader,
    count_newlines,
    line_ranges,
)
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.synthetic import generate_corpus, load_truth

OVERSIZED_LIMIT = 600


def recording(record_id: str) -> dict[str, Any]:
    return {
        "recordId": record_id,
        "sessionId": f"s-{record_id}",
        "recordedAt": "2026-11-28T02:14:00Z",
        "initialUserInput": "where is my order",
        "toolCalls": [{"toolName": "erp_get_order", "arguments": {"orderId": record_id}}],
    }


def hand_file(path: Path) -> tuple[bytes, dict[str, int]]:
    """Good lines around a broken one, an oversized one and a blank one; their byte offsets."""
    lines = [orjson.dumps(recording(f"r-{i}")) for i in range(6)]
    lines.insert(2, b'{"recordId": "r-broken", "sessionId": ')  # invalid JSON
    big = recording("r-big")
    big["initialUserInput"] = "x" * (3 * OVERSIZED_LIMIT)
    lines.insert(5, orjson.dumps(big))
    lines.insert(7, b"")
    lines.append(orjson.dumps(recording("r-last-no-newline")))
    data = b"\n".join(lines)
    path.write_bytes(data)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return data, {"broken": starts[2], "oversized": starts[5], "oversized_end": starts[6] - 1}


def output(out: Path) -> tuple[pa.Table, bytes, dict[str, Any]]:
    """Cases in shard-name order, the quarantine bytes and the summary without timings/names."""
    shards = sorted((out / "cases").glob("*.parquet"))
    table = pa.concat_tables([pq.read_table(p) for p in shards]).combine_chunks()
    summary = orjson.loads((out / "summary.json").read_bytes())
    for key in ("seconds", "mb_per_second", "shards"):
        summary.pop(key)
    for source in summary["sources"]:
        source.pop("seconds")
    return table, (out / "quarantine.jsonl").read_bytes(), summary


def assert_same_output(a: Path, b: Path) -> None:
    table_a, quarantine_a, summary_a = output(a)
    table_b, quarantine_b, summary_b = output(b)
    assert table_a.num_rows == table_b.num_rows
    assert table_a.equals(table_b)
    assert quarantine_a == quarantine_b
    assert summary_a == summary_b


def test_line_ranges_cut_only_at_line_starts(tmp_path: Path) -> None:
    data, at = hand_file(tmp_path / "r.jsonl")
    every_offset = list(range(1, len(data)))
    with (tmp_path / "r.jsonl").open("rb") as fh:
        ranges = line_ranges(fh, len(data), every_offset)
    line_starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    assert [start for start, _ in ranges] == [s for s in line_starts if s < len(data)]
    assert ranges[-1][1] == len(data)
    assert all(end == nxt for (_, end), (nxt, _) in itertools.pairwise(ranges))
    # a nominal offset inside the oversized line moves the boundary past its end
    with (tmp_path / "r.jsonl").open("rb") as fh:
        inside = line_ranges(fh, len(data), [at["oversized"] + 10])
    assert inside[1][0] == at["oversized_end"] + 1
    # an offset exactly at a line start: that line stays in the range before
    with (tmp_path / "r.jsonl").open("rb") as fh:
        exact = line_ranges(fh, len(data), [at["broken"]])
    assert exact[0][0] == 0 and exact[0][1] > at["broken"]


def test_range_reader_and_newline_count(tmp_path: Path) -> None:
    data, at = hand_file(tmp_path / "r.jsonl")
    start, end = at["broken"], at["oversized_end"] + 1
    with (tmp_path / "r.jsonl").open("rb") as fh:
        fh.seek(start)
        view = RangeReader(fh, end - start)
        got = view.read(7) + view.read()
        assert view.read(10) == b""
    assert got == data[start:end]
    assert view.tell() == end - start
    assert count_newlines(str(tmp_path / "r.jsonl"), start, end) == data[start:end].count(b"\n")


def _offset_sets(at: dict[str, int]) -> list[list[int]]:
    broken, oversized = at["broken"], at["oversized"]
    return [
        [broken - 1],  # a range starts exactly at the broken line
        [broken],  # ... or right after it
        [broken - 1, broken],  # the broken line is a range of its own
        [oversized - 1],  # a range starts with the oversized line
        [oversized + 5],  # the oversized line crosses the nominal boundary
        [oversized + 5, oversized + 300, at["oversized_end"]],
        [1, broken + 3, oversized + 2, at["oversized_end"] + 2],
    ]


@pytest.mark.parametrize("twice", [False, True])
def test_boundaries_on_broken_and_oversized_lines_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twice: bool
) -> None:
    """Many boundary placements, cheaply: units run on threads instead of spawned processes.

    ``twice``: the same file given twice (its second reading numbers its lines from 1 again).
    """
    path = tmp_path / "r.jsonl"
    _, at = hand_file(path)
    sources = [str(path)] * (2 if twice else 1)
    config = IngestConfig(max_line_bytes=OVERSIZED_LIMIT, batch_rows=2)
    ingest(sources, tmp_path / "one", config=config)
    assert len(read_quarantine(tmp_path / "one" / "quarantine.jsonl")) == 2 * len(sources)

    monkeypatch.setattr(
        ingest_parallel,
        "ProcessPoolExecutor",
        lambda max_workers, mp_context: ThreadPoolExecutor(max_workers),
    )
    monkeypatch.setattr(ingest_parallel, "MIN_RANGE_BYTES", 1)
    for n, offsets in enumerate(_offset_sets(at)):
        monkeypatch.setattr(ingest_parallel, "even_offsets", lambda size, parts, o=offsets: o)
        out = tmp_path / f"many-{n}"
        summary = ingest(sources, out, config=config, jobs=2)
        assert len({p.name.rsplit("-", 1)[0] for p in summary.shards}) > len(sources), offsets
        assert_same_output(tmp_path / "one", out)


def test_boundary_on_broken_line_with_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    _, at = hand_file(path)
    config = IngestConfig(max_line_bytes=OVERSIZED_LIMIT, batch_rows=2)
    ingest([str(path)], tmp_path / "one", config=config)
    monkeypatch.setattr(ingest_parallel, "MIN_RANGE_BYTES", 1)
    offsets = [at["broken"] - 1, at["broken"], at["oversized"] + 5]
    monkeypatch.setattr(ingest_parallel, "even_offsets", lambda size, parts: offsets)

    summary = ingest([str(path)], tmp_path / "two", config=config, jobs=2)

    assert [p.name for p in summary.shards] == sorted(p.name for p in summary.shards)
    # units: lines 1-2, the broken line 3 alone (no case, no shard), lines 4-6, the rest
    assert [p.name for p in summary.shards] == [
        f"part-{unit:05d}-00000.parquet" for unit in (0, 2, 3)
    ]
    assert_same_output(tmp_path / "one", tmp_path / "two")
    positions = {e["reason"]: e["position"] for e in read_quarantine(summary.quarantine_path)}
    assert positions == {"invalid_json": 3, "oversized_line": 6}
    assert not list((tmp_path / "two").glob("quarantine.part-*"))


@pytest.mark.parametrize(("compress", "shards"), [(None, 1), ("gz", 2)])
def test_generated_corpus_same_as_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compress: str | None, shards: int
) -> None:
    corpus = tmp_path / "corpus"
    generate_corpus(corpus, sessions=200, seed=5, shards=shards, compress=compress)
    truth = load_truth(corpus)
    config = IngestConfig(max_line_bytes=truth.oversized_line_limit, batch_rows=50)
    one = ingest([str(corpus)], tmp_path / "one", config=config)
    # ranges of ~1/6 of the file: several per worker
    size = sum(p.stat().st_size for p in corpus.glob("recordings-*"))
    monkeypatch.setattr(ingest_parallel, "MIN_RANGE_BYTES", 1)
    monkeypatch.setattr(ingest_parallel, "MAX_RANGE_BYTES", size // 6)

    many = ingest([str(corpus)], tmp_path / "many", config=config, jobs=2)

    units = {p.name.rsplit("-", 1)[0] for p in many.shards}
    assert len(units) == (6 if compress is None else shards)
    assert many.quarantined == truth.quarantine_counts == one.quarantined
    assert many.cases_written == truth.valid_records
    assert many.bytes_read == one.bytes_read
    planted = {(b["file"], b["line"], b["reason"]) for b in truth.broken_lines}
    got = {
        (Path(e["uri"]).name, e["position"], e["reason"])
        for e in read_quarantine(many.quarantine_path)
    }
    assert got == planted
    assert_same_output(tmp_path / "one", tmp_path / "many")


def test_one_unit_reads_in_process_and_jobs_must_not_be_negative(tmp_path: Path) -> None:
    path = tmp_path / "small.jsonl.gz"
    path.write_bytes(gzip.compress(orjson.dumps(recording("r-1")) + b"\n"))
    summary = ingest([str(path)], tmp_path / "out", jobs=0)
    assert [p.name for p in summary.shards] == ["part-00000.parquet"]
    assert summary.cases_written == 1
    with pytest.raises(IngestError, match="jobs"):
        ingest([str(path)], tmp_path / "bad", jobs=-1)


def test_cli_jobs_option(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    for n in range(2):
        path = tmp_path / f"in-{n}.jsonl.gz"
        path.write_bytes(gzip.compress(orjson.dumps(recording(f"r-{n}")) + b"\n"))
    runner = CliRunner()
    bad = runner.invoke(app, ["ingest", str(tmp_path / "in-0.jsonl.gz"), "-o", "x", "--jobs", "-2"])
    assert bad.exit_code == 2
    result = runner.invoke(
        app, ["ingest", str(tmp_path), "--out", str(tmp_path / "out"), "--jobs", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = orjson.loads(result.stdout)
    assert summary["cases_written"] == 2
    assert summary["shards"] == ["cases/part-00000-00000.parquet", "cases/part-00001-00000.parquet"]
