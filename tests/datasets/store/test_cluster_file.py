"""A clusters file written one range of clusters at a time (datasets/store/cluster_file.py)
holds the rows, order and marks of the one sorted in memory."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.store.case_files import write_clusters
from golden_distill.datasets.store.cluster_file import range_bounds, write_clusters_from
from golden_distill.datasets.store.cluster_marks import mark_published
from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA


def _clusters(n_clusters: int) -> pl.DataFrame:
    rng = random.Random(7)
    rows = []
    for c in range(n_clusters):
        size = rng.choice([1, 1, 2, 3, 7])
        cluster_id = None if c == 5 else f"c{rng.getrandbits(40):012x}"
        for rank in range(size):
            rows.append(
                {
                    "cluster_id": cluster_id,
                    "case_id": f"case-{c}-{rank}",
                    "exact_hash": f"h{c}-{rank % 2}",
                    "role": "representative" if rank == 0 else "member",
                    "merged_by": "self" if rank == 0 else rng.choice(["exact", "near"]),
                    "distance_to_representative": rng.random(),
                    "rank": rank,
                    "cluster_size": size,
                }
            )
    rng.shuffle(rows)  # the flow's table is in no particular order
    return pl.DataFrame(rows, schema=CLUSTER_SCHEMA)


@pytest.mark.parametrize("rows", [1, 10, 100_000])
def test_ranged_write_equals_the_in_memory_write(tmp_path: Path, rows: int):
    frame = _clusters(300)
    source = tmp_path / "in.parquet"
    frame.write_parquet(source)
    published = pa.array(frame.filter(pl.col("rank") == 1).get_column("case_id").to_list())
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ranged = write_clusters_from(source, published, tmp_path / "a", rows=rows)
    whole = write_clusters(mark_published(frame.to_arrow(), published), tmp_path / "b")
    assert ranged["rows"] == whole["rows"] == frame.height
    got = pq.read_table(tmp_path / "a" / "clusters.parquet")
    want = pq.read_table(tmp_path / "b" / "clusters.parquet")
    assert got.schema == want.schema
    assert got.equals(want)  # same rows, same order, same marks
    assert got.column("cluster_id").null_count == want.column("cluster_id").null_count > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "in.parquet"]  # no scratch


def test_ranges_hold_whole_clusters_of_about_the_asked_rows():
    ids = _clusters(400).get_column("cluster_id")
    bounds = range_bounds(ids, 50)
    assert bounds.is_sorted() and bounds.n_unique() == len(bounds) > 5
    per_range = bounds.search_sorted(ids.drop_nulls(), side="right").value_counts()
    assert per_range.get_column("count").max() < 50 + 7  # a range ends at the first whole cluster
    assert range_bounds(pl.Series("cluster_id", [], dtype=pl.String)).len() == 0
