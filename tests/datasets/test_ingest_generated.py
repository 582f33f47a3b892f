"""Ingesting a generated corpus quarantines exactly the planted broken lines, and nothing else."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.synthetic import generate_corpus, load_truth


@pytest.mark.parametrize(("compress", "shards"), [("gz", 2), ("zst", 2), (None, 1)])
def test_generated_corpus_matches_its_truth(
    tmp_path: Path, compress: str | None, shards: int
) -> None:
    corpus = tmp_path / "corpus"
    generate_corpus(corpus, sessions=300, seed=11, shards=shards, compress=compress)
    truth = load_truth(corpus)
    config = IngestConfig(max_line_bytes=truth.oversized_line_limit, batch_rows=64)

    summary = ingest([str(corpus)], tmp_path / "out", config=config)

    planted = {(b["file"], b["line"], b["reason"]) for b in truth.broken_lines}
    entries = read_quarantine(tmp_path / "out" / "quarantine.jsonl")
    got = {(Path(e["uri"]).name, e["position"], e["reason"]) for e in entries}
    assert got == planted
    assert len(entries) == len(truth.broken_lines)
    assert summary.quarantined == truth.quarantine_counts
    assert summary.cases_written == truth.valid_records
    assert not summary.failed

    ids = set()
    for shard in summary.shards:
        ids.update(pq.read_table(shard, columns=["source"]).column("source").combine_chunks()
                   .field("source_record_id").to_pylist())  # fmt: skip
    assert ids == set(truth.records)
    assert not ids & set(truth.lost_record_ids)
