"""Ingesting a generated corpus reproduces the truth: planted lines quarantined, the rest cases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.synthetic import load_truth


@pytest.mark.parametrize("compress", [None, "gz", "zst"])
def test_ingest_matches_truth(
    corpus_factory: Callable[..., Path], tmp_path: Path, compress: str | None
) -> None:
    src = corpus_factory(f"ingest_{compress}", sessions=150, seed=31, shards=2, compress=compress)
    truth = load_truth(src)
    files = [str(src / f) for f in truth.summary["files"]]
    summary = ingest(
        files,
        tmp_path / "out",
        fmt="native",
        config=IngestConfig(max_line_bytes=truth.oversized_line_limit),
    )
    assert summary.cases_written == truth.valid_records
    assert dict(summary.quarantined) == truth.quarantine_counts
    entries = read_quarantine(summary.quarantine_path)
    got = sorted((Path(e["uri"]).name, e["position"], e["reason"]) for e in entries)
    want = sorted((b["file"], b["line"], b["reason"]) for b in truth.broken_lines)
    assert got == want
    case_ids = set()
    for shard in summary.shards:
        case_ids.update(pq.read_table(shard, columns=["case_id"]).column("case_id").to_pylist())
    assert case_ids == {make_case_id("native", rid) for rid in truth.records}
