"""Growing a golden set night by night: the previous version's clusters plus this window's cases.

A version is the previous version's cases that are still inside the retention window plus this
window's new representatives, deduplicated *jointly*: the carried representatives and the new
cases are clustered together (``filters.dedup.cluster``), and

* a new case in a cluster holding a carried representative joins that representative's cluster:
  the representative stays (the set is stable from night to night), its ``cluster_size`` grows
  by the new members and its ``last_seen`` moves to the newest of them;
* a cluster of new cases only is a new cluster: its representative is chosen as in a full run;
* a carried cluster not seen for ``max_age_days`` (its ``last_seen`` older than the window's
  end minus that) leaves the set with reason ``aged_out``.

Pure functions over small frames (ids, cluster ids, sizes, times); no I/O, no Prefect. The cost
of a night is its own cases plus the carried representatives, never history.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

#: One row per carried representative (a case of the previous version).
CARRIED_SCHEMA: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "cluster_id": pl.String(),
    "cluster_size": pl.Int32(),
    "last_seen": pl.Datetime("ms", "UTC"),
}

AGED_OUT = "aged_out"


def carried_from_parent(cases: pl.DataFrame, parent_clusters: pl.DataFrame | None) -> pl.DataFrame:
    """``CARRIED_SCHEMA`` rows of the previous version's cases.

    ``cases`` has case_id, cluster_id, cluster_size and recorded_at of each published case;
    ``parent_clusters`` (its published cluster table) may carry ``last_seen`` per cluster. A
    case without a cluster (dedup was off) is its own cluster of one."""
    frame = cases.select(
        "case_id",
        pl.coalesce(pl.col("cluster_id"), pl.lit("cl_") + pl.col("case_id")).alias("cluster_id"),
        pl.col("cluster_size").fill_null(1).cast(pl.Int32),
        pl.col("recorded_at").cast(pl.Datetime("ms", "UTC")).alias("last_seen"),
    )
    if parent_clusters is not None and "last_seen" in parent_clusters.columns:
        seen = parent_clusters.group_by("cluster_id").agg(
            pl.col("last_seen").cast(pl.Datetime("ms", "UTC")).max().alias("_seen")
        )
        frame = frame.join(seen, on="cluster_id", how="left").with_columns(
            pl.coalesce("_seen", "last_seen").alias("last_seen")
        )
    return frame.select(list(CARRIED_SCHEMA)).cast(CARRIED_SCHEMA)  # type: ignore[arg-type]


def age_out(
    carried: pl.DataFrame, until: datetime | None, max_age_days: float | None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(kept, left): carried clusters last seen within ``max_age_days`` of ``until``, and the
    ones that leave (case_id, cluster_id, reason ``aged_out``)."""
    if max_age_days is None or until is None or carried.height == 0:
        return carried, pl.DataFrame(
            schema={"case_id": pl.String(), "cluster_id": pl.String(), "reason": pl.String()}
        )
    cutoff = until - timedelta(days=max_age_days)
    old = pl.col("last_seen").is_not_null() & (pl.col("last_seen") < pl.lit(cutoff))
    left = carried.filter(old).select("case_id", "cluster_id", pl.lit(AGED_OUT).alias("reason"))
    return carried.filter(~old), left


def attach_new(
    carried: pl.DataFrame, joint: pl.DataFrame, seen: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Split a joint cluster table (``filters.dedup.cluster`` over carried + new signatures).

    ``seen`` maps every new case_id to its recorded_at. Returns
    (carried with grown sizes and last_seen, the new members attached to carried clusters
    (case_id, cluster_id = the carried cluster's id), the cluster table of new-only clusters)."""
    old_ids = carried.get_column("case_id").implode()
    marked = joint.with_columns(pl.col("case_id").is_in(old_ids).alias("_old"))
    anchors = (
        marked.filter(pl.col("_old"))
        .sort("rank")
        .group_by("cluster_id", maintain_order=True)
        .first()
        .select(pl.col("cluster_id").alias("_joint"), pl.col("case_id").alias("_anchor"))
    )
    joined_old = anchors.get_column("_joint").implode()
    attached = (
        marked.filter(~pl.col("_old") & pl.col("cluster_id").is_in(joined_old))
        .join(anchors, left_on="cluster_id", right_on="_joint")
        .join(
            carried.select("case_id", pl.col("cluster_id").alias("_cl")),
            left_on="_anchor",
            right_on="case_id",
        )
        .join(seen, on="case_id", how="left")
        .select(
            "case_id",
            pl.col("_cl").alias("cluster_id"),
            pl.col("_anchor").alias("representative"),
            "merged_by",
            "distance_to_representative",
            "exact_hash",
            pl.col("recorded_at").cast(pl.Datetime("ms", "UTC")),
        )
    )
    growth = attached.group_by("representative").agg(
        pl.len().cast(pl.Int32).alias("_grow"), pl.col("recorded_at").max().alias("_newest")
    )
    grown = (
        carried.join(growth, left_on="case_id", right_on="representative", how="left")
        .with_columns(
            (pl.col("cluster_size") + pl.col("_grow").fill_null(0)).cast(pl.Int32),
            pl.max_horizontal("last_seen", "_newest").alias("last_seen"),
        )
        .select(list(CARRIED_SCHEMA))
    )
    fresh = marked.filter(~pl.col("cluster_id").is_in(joined_old)).drop("_old")
    return grown, attached, fresh
