"""Borderline merges: members that joined their cluster only just inside the threshold.

A near-duplicate merge close to ``distance_threshold`` is the one a threshold change would
undo (or, just past it with average linkage, the one the cluster's mean let in). Listing those
pairs in the report and in `golden preview` lets an engineer see what the threshold is deciding
before tightening or loosening it, instead of the merge happening silently. Mixed pairs (the
same run recorded for different work, ``mixed_pairs``) are listed beside them: never merged,
but worth a reviewer's look.
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


MIXED_SCHEMA: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "other": pl.String(),
    "differs": pl.String(),
}

#: The parts of a work key (``signature.work_keys``), in order.
_WORK_PARTS = ("task", "outcome", "tenant")


def _differs(a: str, b: str) -> str:
    pairs = zip(a.split("."), b.split("."), strict=False)
    return ", ".join(name for name, (x, y) in zip(_WORK_PARTS, pairs, strict=False) if x != y)


def mixed_pairs(keys: pl.DataFrame) -> pl.DataFrame:
    """Runs with the same normalised content but different work (task, outcome or tenant):
    one pair per extra work key of a content hash, each against the content's first case.

    Dedup never merges them (the work key is part of every dedup key); they are listed next to
    the borderline merges so a reviewer sees the same transcript ended differently, or served
    another task or tenant. ``keys``: case_id, content_hash, work_key of the candidates (the
    small plan columns suffice, so the bucketed path lists the same pairs as ``cluster``)."""
    if keys.height == 0:
        return pl.DataFrame(schema=MIXED_SCHEMA)
    firsts = (
        keys.select("case_id", "content_hash", "work_key")
        .sort(["content_hash", "work_key", "case_id"])
        .unique(["content_hash", "work_key"], keep="first", maintain_order=True)
        .filter(pl.len().over("content_hash") > 1)
    )
    if firsts.height == 0:
        return pl.DataFrame(schema=MIXED_SCHEMA)
    firsts = firsts.with_columns(
        pl.col("case_id").first().over("content_hash").alias("other"),
        pl.col("work_key").first().over("content_hash").alias("other_work"),
    ).filter(pl.col("case_id") != pl.col("other"))
    differs = [_differs(a, b) for a, b in firsts.select("work_key", "other_work").iter_rows()]
    return (
        firsts.select("case_id", "other")
        .with_columns(pl.Series("differs", differs, dtype=pl.String))
        .sort(["other", "case_id"])
        .cast(MIXED_SCHEMA)  # type: ignore[arg-type]
    )
