"""Dedup in buckets (filters/dedup/buckets.py) gives exactly the all-at-once clusters."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, fields
from pathlib import Path

import polars as pl
import pytest

from golden_distill.datasets.ingest import ingest
from golden_distill.filters.dedup import DedupConfig, cluster, signatures
from golden_distill.filters.dedup.buckets import (
    PLAN_COLUMNS,
    merge_largest,
    merge_stats,
    plan_buckets,
)
from golden_distill.filters.dedup.report import largest_clusters
from golden_distill.synthetic import generate_corpus


@pytest.fixture(scope="module")
def sigs(tmp_path_factory) -> pl.DataFrame:
    root: Path = tmp_path_factory.mktemp("bucket-corpus")
    generate_corpus(root / "raw", sessions=300, seed=23)
    ingest(sorted(str(p) for p in (root / "raw").glob("recordings-*")), root / "c", fmt="native")
    frame = pl.read_parquet(root / "c" / "cases")
    scores = [int(hashlib.sha256(c.encode()).hexdigest()[:8], 16) / 2**32 for c in frame["case_id"]]
    frame = frame.with_columns(
        pl.Series("value_score", scores, dtype=pl.Float64),
        pl.lit(["high_value_mutating"], dtype=pl.List(pl.String)).alias("funnels"),
    )
    out = signatures(frame, CFG)
    # the same record read twice (two input files), and one case id seen with another run
    twice = out.head(3)
    other = out.slice(5, 1).with_columns(exact_hash=pl.lit("0" * 32))
    return pl.concat([out, twice, other])


CFG = DedupConfig(large_block_size=3)  # large groups go through k-means partitions too


def _in_buckets(sigs: pl.DataFrame, cfg: DedupConfig, rows: int):
    plan = plan_buckets(sigs.select(PLAN_COLUMNS), cfg, bucket_rows=rows)

    tables, parts, largest = [], [], []
    for index in range(plan.buckets):
        pairs = plan.bucket(index)
        rows_of_bucket = sigs.join(pairs, on=["case_id", "exact_hash"], how="semi")
        if rows_of_bucket.height == 0:
            continue
        clustering = cluster(rows_of_bucket, cfg)
        tables.append(clustering.table)
        parts.append(clustering.stats)
        largest.append(largest_clusters(clustering.table, rows_of_bucket, 5))
    table = pl.concat(tables).sort(["cluster_id", "rank"])
    return plan, table, merge_stats(parts, plan), merge_largest(largest, 5)


@pytest.mark.parametrize("rows", [40, 150])
def test_bucketed_clusters_equal_the_all_at_once_clusters(sigs, rows):
    whole = cluster(sigs, CFG)
    plan, table, stats, largest = _in_buckets(sigs, CFG, rows)
    assert plan.buckets > 1 and len(set(plan.assignment["bucket"])) > 1
    assert table.equals(whole.table)
    for f in fields(stats):
        if f.name != "seconds":
            assert getattr(stats, f.name) == getattr(whole.stats, f.name), f.name
    assert whole.stats.duplicate_case_ids == 4 and whole.stats.partitions > 0
    assert [asdict(c) for c in largest] == [
        asdict(c) for c in largest_clusters(whole.table, sigs, 5)
    ]


def test_a_unit_goes_with_the_group_of_its_best_case(sigs):
    """Exact duplicates in different blocks are one unit in the group of the best-priority
    case: every case of one exact hash lands in one bucket."""
    plan = plan_buckets(sigs.select(PLAN_COLUMNS), CFG, bucket_rows=20)
    per_hash = plan.assignment.group_by("exact_hash").agg(pl.col("bucket").n_unique())
    assert per_hash["bucket"].max() == 1
    assert plan.assignment["case_id"].n_unique() == plan.assignment.height


def test_blocks_bucket_whole_when_paths_may_differ(sigs):
    """With tool paths allowed to differ, a group is a whole block (not block + path)."""
    loose = DedupConfig(max_trajectory_distance=0.5, large_block_size=6)
    plan, table, _, _ = _in_buckets(sigs, loose, 60)
    assert plan.buckets > 1
    assert table.equals(cluster(sigs, loose).table)
