"""Borderline merges: members that joined their cluster only just inside the threshold.

A near-duplicate merge close to ``distance_threshold`` is the one a threshold change would
undo (or, just past it with average linkage, the one the cluster's mean let in). Listing those
pairs in the report and in `golden preview` lets an engineer see what the threshold is deciding
before tightening or loosening it, instead of the merge happening silently.
"""

from __future__ import annotations

import polars as pl

from golden_distill.filters.dedup.config import DedupConfig

BORDERLINE_SCHEMA: dict[str, pl.DataType] = {
    "cluster_id": pl.String(),
    "case_id": pl.String(),
    "representative": pl.String(),
    "distance": pl.Float64(),
}


def borderline_members(clusters: pl.DataFrame, cfg: DedupConfig) -> pl.DataFrame:
    """Near-duplicate members whose distance to their representative is within
    ``cfg.borderline_band`` of the threshold (or past it), closest to the edge first."""
    if clusters.height == 0:
        return pl.DataFrame(schema=BORDERLINE_SCHEMA)
    edge = cfg.distance_threshold - cfg.borderline_band
    reps = clusters.filter(pl.col("rank") == 0).select(
        "cluster_id", representative=pl.col("case_id")
    )
    near = clusters.filter(
        (pl.col("merged_by") == "near") & (pl.col("distance_to_representative") >= edge - 1e-9)
    )
    return (
        near.join(reps, on="cluster_id", how="left")
        .select(
            "cluster_id",
            "case_id",
            "representative",
            distance=pl.col("distance_to_representative").round(4),
        )
        .sort(["distance", "case_id"], descending=[True, False])
        .cast(BORDERLINE_SCHEMA)  # type: ignore[arg-type]
    )
