"""Global dedup in buckets: the same cluster table as ``cluster.cluster``, in bounded memory.

``cluster`` needs every candidate's signature in memory at once (the request text, tool path
and argument shapes: ~0.8 KB per candidate, plus its working memory), so the select step's
memory grew with the night. But clusters never cross a near-duplicate *group* (``units``: the
block, and the tool path when paths must match), and an exact-duplicate *unit* (one
``exact_hash``) belongs to the group of its best-priority case. So a first pass over a few
small columns assigns every unit's group to a bucket; then each bucket's signatures are loaded
and clustered alone (``cluster_buckets``). Every cluster lies inside one bucket, and a
cluster's ids, ranks and distances depend on its members only, so the concatenated tables equal
the all-at-once table (tests/filters/dedup/test_buckets.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import polars as pl

from golden_distill.filters.dedup.blocking import PRIORITY_DESCENDING, PRIORITY_KEYS
from golden_distill.filters.dedup.cluster import ClusterStats
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.report import LargestCluster

#: Candidates clustered at once: their signatures and features are what the select step holds
#: (~3 KB each while clustering), so a bucket of 50k costs ~0.15 GB whatever the night's size.
BUCKET_ROWS = 50_000

#: The small columns the bucket plan reads (every candidate's; no request text).
PLAN_COLUMNS = [
    "case_id",
    "exact_hash",
    "content_hash",
    "work_key",
    "block_key",
    "path_key",
    "value_score",
    "distinct_tools",
    "recorded_at",
]


@dataclass(frozen=True)
class BucketPlan:
    """``assignment``: one row per distinct case id (the pair ``cluster`` would keep: the
    smallest exact hash of a case id seen twice) with its ``bucket``."""

    assignment: pl.DataFrame  # case_id, exact_hash, bucket
    buckets: int
    duplicate_case_ids: int  # rows dropped because their case id was seen before
    blocks: int  # distinct block keys (a run-wide count, not a sum over buckets)

    def bucket(self, index: int) -> pl.DataFrame:
        """The (case_id, exact_hash) pairs of bucket ``index``."""
        return self.assignment.filter(pl.col("bucket") == index).select("case_id", "exact_hash")


def plan_buckets(
    keys: pl.DataFrame, cfg: DedupConfig, bucket_rows: int = BUCKET_ROWS
) -> BucketPlan:
    """Buckets of whole groups for ``keys`` (PLAN_COLUMNS of every candidate)."""
    # a case id seen twice keeps its smallest exact hash (what ``cluster`` keeps); the night's
    # keys are not sorted for the few such ids (row order does not matter below)
    twice = pl.col("case_id").is_duplicated()
    unique = pl.concat(
        [
            keys.filter(~twice),
            keys.filter(twice)
            .sort(["case_id", "exact_hash"])
            .unique(subset="case_id", keep="first", maintain_order=True),
        ]
    )
    buckets = max(1, math.ceil(unique.height / bucket_rows))
    group_key = (
        pl.concat_str("block_key", "path_key", separator="/")
        if cfg.max_trajectory_distance == 0
        else pl.col("block_key")
    )
    # a unit's group is its best case's (``units``: the first row of ``priority_order``, a
    # total order: case ids are distinct here), found per unit without sorting every row
    best_first = group_key.sort_by(
        PRIORITY_KEYS, descending=PRIORITY_DESCENDING, nulls_last=True
    ).first()
    unit_group = unique.group_by("exact_hash").agg(best_first.alias("g"))
    unit_bucket = unit_group.select(
        "exact_hash", bucket=(pl.col("g").hash(seed=0) % buckets).cast(pl.Int32)
    )
    assignment = unique.select("case_id", "exact_hash").join(
        unit_bucket, on="exact_hash", how="left"
    )
    return BucketPlan(
        assignment=assignment,
        buckets=buckets,
        duplicate_case_ids=keys.height - unique.height,
        blocks=unique.get_column("block_key").n_unique(),
    )


def merge_stats(parts: list[ClusterStats], plan: BucketPlan) -> ClusterStats:
    """One ``ClusterStats`` for the buckets' stats: counts add up (each case, unit, group and
    cluster is in one bucket), the largest group is the largest of any bucket, the run-wide
    counts come from the plan."""
    total = ClusterStats()
    for part in parts:
        for f in fields(ClusterStats):
            name = f.name
            if name == "seconds":
                for key, seconds in part.seconds.items():
                    total.seconds[key] = round(total.seconds.get(key, 0.0) + seconds, 3)
            elif name == "largest_group":
                total.largest_group = max(total.largest_group, part.largest_group)
            else:
                setattr(total, name, getattr(total, name) + getattr(part, name))
    total.duplicate_case_ids = plan.duplicate_case_ids
    total.blocks = plan.blocks
    return total


def merge_largest(parts: list[list[LargestCluster]], top: int) -> list[LargestCluster]:
    """The ``top`` largest of the buckets' own top lists, in ``largest_clusters``' order (a
    cluster lies in one bucket, so the run-wide top is among the buckets' tops)."""
    merged = [c for part in parts for c in part]
    return sorted(merged, key=lambda c: (-c.size, c.cluster_id))[:top]
