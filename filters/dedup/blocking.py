"""Blocking: exact-duplicate groups ("units") and the blocks near duplicates are searched in.

Exact duplicates share an ``exact_hash``; they are collapsed into one *unit* before any model
runs, so clustering cost grows with the number of distinct runs, not with the number of cases.
Units are then grouped by ``block_key`` (same write calls, and by default the same read tools):
two runs with different write calls are in different blocks and can never be merged. When the
config requires identical tool paths (``max_trajectory_distance == 0``) the path is part of the
group key too, which gives the same clusters with much smaller groups.

Everything is sorted by content hashes and case ids, never by input position, so the result is
the same for any order of the input rows.
"""

from __future__ import annotations

import polars as pl

from golden_distill.filters.dedup.config import DedupConfig

#: The order of a cluster's members, best first (``priority_order``).
PRIORITY_KEYS = ["value_score", "distinct_tools", "recorded_at", "case_id"]
PRIORITY_DESCENDING = [True, True, False, False]


def priority_order(signatures: pl.DataFrame) -> pl.DataFrame:
    """Signatures sorted best-first with ``priority`` (0 = best representative).

    Highest value_score (missing counts as lowest), then most distinct tools, then earliest
    recorded, then case_id so that ties are broken the same way on every run.
    """
    ordered = signatures.sort(PRIORITY_KEYS, descending=PRIORITY_DESCENDING, nulls_last=True)
    return ordered.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("priority"))


def units(signatures: pl.DataFrame, cfg: DedupConfig) -> pl.DataFrame:
    """One row per distinct normalised run (exact hash), sorted by group then hash.

    Columns: exact_hash, group_key, trajectory, argument_shapes, text, best_priority (the
    priority of its best case), n_cases.
    """
    group_key = (
        pl.concat_str("block_key", "path_key", separator="/")
        if cfg.max_trajectory_distance == 0
        else pl.col("block_key")
    )
    return (
        signatures.group_by("exact_hash")
        .agg(
            group_key.first().alias("group_key"),
            pl.col("trajectory").first(),
            pl.col("argument_shapes").first(),
            pl.col("text").first(),
            pl.col("priority").min().alias("best_priority"),
            pl.len().alias("n_cases"),
        )
        .sort(["group_key", "exact_hash"])
    )


def group_bounds(unit_table: pl.DataFrame) -> list[tuple[int, int]]:
    """``[start, end)`` row ranges of each group in the (group-sorted) unit table."""
    sizes = unit_table.group_by("group_key", maintain_order=True).agg(pl.len()).get_column("len")
    bounds: list[tuple[int, int]] = []
    start = 0
    for size in sizes.to_list():
        bounds.append((start, start + size))
        start += size
    return bounds
