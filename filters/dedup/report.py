"""The dedup section of the run report: the largest clusters with their members, never request
text (the flow puts them in the report and the manifest stats).

What a data engineer needs to tune the thresholds: how many clusters, how big (a histogram),
how many cases each funnel lost to dedup, and the largest clusters with their normalised tool
path (tool names, statuses and write/read flags only, which carry no personal data).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl


@dataclass(slots=True)
class LargestCluster:
    cluster_id: str
    size: int
    exact_members: int
    near_members: int
    max_distance: float
    trajectory: str  # normalised tool path: name:status:W|R tokens
    outcome: str = ""  # the representative's outcome label (reward, hand-off)
    #: every member (up to MEMBERS_SHOWN): case_id, role, merged_by, distance, outcome
    members: list[dict[str, Any]] = field(default_factory=list)


#: Members listed per large cluster (the rest are counted in ``size``).
MEMBERS_SHOWN = 25


def largest_clusters(
    clusters: pl.DataFrame, signatures: pl.DataFrame, top: int
) -> list[LargestCluster]:
    """The ``top`` largest clusters (2+ members) with their tool path and members: ids, role,
    how they were merged, distance to the representative and outcome (never request text)."""
    if top == 0:
        return []
    per = (
        clusters.group_by("cluster_id")
        .agg(
            pl.len().alias("size"),
            (pl.col("merged_by") == "exact").sum().alias("exact"),
            (pl.col("merged_by") == "near").sum().alias("near"),
            pl.col("distance_to_representative").max().alias("max_distance"),
            pl.col("case_id").filter(pl.col("rank") == 0).first().alias("rep"),
        )
        .filter(pl.col("size") > 1)
        .sort(["size", "cluster_id"], descending=[True, False])
        .head(top)
        .join(
            signatures.select(
                pl.col("case_id").alias("rep"), "trajectory", _outcome(signatures)
            ).unique("rep", keep="first"),
            on="rep",
            how="left",
        )
        .sort(["size", "cluster_id"], descending=[True, False])
    )
    shown = per.get_column("cluster_id")
    members = (
        clusters.filter(pl.col("cluster_id").is_in(shown.implode()))
        .join(
            signatures.select("case_id", _outcome(signatures)).unique("case_id", keep="first"),
            on="case_id",
            how="left",
        )
        .sort(["cluster_id", "rank"])
        .group_by("cluster_id", maintain_order=True)
        .agg(
            pl.struct(
                "case_id",
                "role",
                "merged_by",
                distance=pl.col("distance_to_representative").round(4),
                outcome=pl.col("outcome").fill_null(""),
            )
            .head(MEMBERS_SHOWN)
            .alias("members")
        )
    )
    listed = dict(zip(members["cluster_id"], members["members"].to_list(), strict=True))
    return [
        LargestCluster(
            cluster_id=r["cluster_id"],
            size=int(r["size"]),
            exact_members=int(r["exact"]),
            near_members=int(r["near"]),
            max_distance=round(float(r["max_distance"] or 0.0), 4),
            trajectory=r["trajectory"] or "",
            outcome=r["outcome"] or "",
            members=listed.get(r["cluster_id"], []),
        )
        for r in per.iter_rows(named=True)
    ]


def _outcome(signatures: pl.DataFrame) -> pl.Expr:
    if "outcome" in signatures.columns:
        return pl.col("outcome")
    return pl.lit("", dtype=pl.String).alias("outcome")


def mark_published(
    largest: list[dict[str, Any]], published: set[str], refused: set[str] | None = None
) -> list[dict[str, Any]]:
    """The largest clusters (``asdict(LargestCluster)`` rows, as the stats hold them) with each
    member's role as published: ``published`` for the member the version holds (the select
    step's representative may have been refused by redaction or rejected in review, and
    another member published in its place), ``refused`` for a member redaction refused,
    ``member`` otherwise; each cluster names its ``published`` member (None: lost)."""
    refused = refused or set()
    out = []
    for cluster in largest:
        members = []
        for member in cluster.get("members") or []:
            case_id = member["case_id"]
            role = (
                "published"
                if case_id in published
                else "refused"
                if case_id in refused
                else "member"
            )
            members.append({**member, "role": role})
        shown = next((m["case_id"] for m in members if m["role"] == "published"), None)
        out.append({**cluster, "members": members, "published": shown})
    return out
