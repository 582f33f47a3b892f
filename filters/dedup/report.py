"""The dedup section of the run report: counts, sizes and trajectories, never request text.

What a data engineer needs to tune the thresholds: how many clusters, how big (a histogram),
how many cases each funnel lost to dedup, and the largest clusters with their normalised tool
path (tool names, statuses and write/read flags only, which carry no personal data).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
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


@dataclass(slots=True)
class DedupReport:
    cases_in: int
    cases_kept: int
    clusters: int
    singletons: int
    removed_exact: int
    removed_near: int
    replaced_representatives: int
    size_histogram: dict[int, int]  # cluster size -> number of clusters
    removed_per_funnel: dict[str, int]
    largest: list[LargestCluster] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    #: near-duplicate members at the edge of the threshold (see borderline.py)
    borderline: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (histogram keys as strings)."""
        out = asdict(self)
        out["size_histogram"] = {str(k): v for k, v in self.size_histogram.items()}
        return out


def _histogram(clusters: pl.DataFrame) -> dict[int, int]:
    sizes = (
        clusters.filter(pl.col("rank") == 0)
        .group_by("cluster_size")
        .agg(pl.len().alias("n"))
        .sort("cluster_size")
    )
    return dict(zip(sizes.get_column("cluster_size"), sizes.get_column("n"), strict=True))


def _removed_per_funnel(signatures: pl.DataFrame, removed_ids: pl.Series) -> dict[str, int]:
    removed = signatures.filter(pl.col("case_id").is_in(removed_ids.implode()))
    per = (
        removed.select(pl.col("funnels").fill_null([]))
        .explode("funnels")
        .drop_nulls()
        .group_by("funnels")
        .agg(pl.len().alias("n"))
        .sort("funnels")
    )
    return dict(zip(per.get_column("funnels"), per.get_column("n"), strict=True))


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


def build_report(
    clusters: pl.DataFrame,
    signatures: pl.DataFrame,
    kept: pl.DataFrame,
    *,
    excluded_case_ids: Iterable[str] = (),
    largest: int = 10,
    stats: dict[str, Any] | None = None,
    borderline: list[dict[str, Any]] | None = None,
) -> DedupReport:
    """The report for one dedup run (``kept`` from ``choose_representatives``).

    Cases excluded by the caller (quarantined later) are not counted as removed by dedup.
    """
    gone = pl.concat(
        [kept.get_column("case_id"), pl.Series(list(excluded_case_ids), dtype=pl.String)]
    )
    removed = clusters.filter(~pl.col("case_id").is_in(gone.implode()))
    by = removed.get_column("merged_by").value_counts()
    counts = dict(zip(by.get_column("merged_by"), by.get_column("count"), strict=True))
    return DedupReport(
        cases_in=clusters.height,
        cases_kept=kept.height,
        clusters=int((clusters.get_column("rank") == 0).sum()),
        singletons=int((clusters.get_column("cluster_size") == 1).sum()),
        removed_exact=int(counts.get("exact", 0)),
        removed_near=int(counts.get("near", 0)),
        replaced_representatives=int(kept.get_column("replaces_excluded").sum()),
        size_histogram=_histogram(clusters),
        removed_per_funnel=_removed_per_funnel(signatures, removed.get_column("case_id")),
        largest=largest_clusters(clusters, signatures, largest),
        stats=stats or {},
        borderline=borderline or [],
    )
