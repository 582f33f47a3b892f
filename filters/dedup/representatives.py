"""Which members of each cluster are kept, with the replacement rule for quarantined ones.

The cluster table already ranks members best-first (value_score, then distinct tools, then
earliest). Keeping is a separate decision (score, then decide): take the first
``keep_per_cluster`` members that are not excluded. Extra representatives (k > 1) come from
*different* exact-duplicate groups first, for variety, then from the rest in rank order.

Exclusion is how the flow handles a representative that redaction later quarantines: call again
with its id in ``excluded_case_ids`` and the next member of its cluster takes its place, so a
cluster is only lost when every one of its members is excluded.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

KEPT_SCHEMA: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "cluster_id": pl.String(),
    "cluster_size": pl.Int32(),
    "rank": pl.Int32(),
    "replaces_excluded": pl.Boolean(),
}


def choose_representatives(
    clusters: pl.DataFrame,
    excluded_case_ids: Iterable[str] = (),
    keep_per_cluster: int = 1,
) -> pl.DataFrame:
    """The kept cases (``KEPT_SCHEMA``), sorted by cluster id then rank.

    ``replaces_excluded`` is true for a kept case that only made it because a better-ranked
    member of its cluster was excluded (so the flow can report replacements).
    """
    if keep_per_cluster < 1:
        raise ValueError("keep_per_cluster must be >= 1")
    excluded = pl.Series("excluded", list(excluded_case_ids), dtype=pl.String)
    candidates = clusters.filter(~pl.col("case_id").is_in(excluded.implode()))
    ordered = candidates.sort(["cluster_id", "rank"]).with_columns(
        (pl.int_range(pl.len()).over(["cluster_id", "exact_hash"]) > 0).alias("_repeat")
    )
    kept = (
        ordered.sort(["cluster_id", "_repeat", "rank"])
        .with_columns(pl.int_range(pl.len()).over("cluster_id").alias("_slot"))
        .filter(pl.col("_slot") < keep_per_cluster)
    )
    # a kept case "replaces" when some better-ranked member of its cluster was excluded
    excluded_ranks = (
        clusters.filter(pl.col("case_id").is_in(excluded.implode()))
        .group_by("cluster_id")
        .agg(pl.col("rank").min().alias("_first_excluded"))
    )
    kept = kept.join(excluded_ranks, on="cluster_id", how="left").with_columns(
        (
            pl.col("_first_excluded").is_not_null() & (pl.col("_first_excluded") < pl.col("rank"))
        ).alias("replaces_excluded")
    )
    return (
        kept.select(list(KEPT_SCHEMA)).sort(["cluster_id", "rank"]).cast(KEPT_SCHEMA)  # type: ignore[arg-type]
    )
