"""Test helpers for dedup: one call over one frame (signatures, clusters, representatives) and
its summary report. The flow runs the phases separately (``signatures`` per shard, then
``filters.selection``); these exist so dedup tests can check a whole run at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from golden_distill.filters.dedup.borderline import borderline_members
from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA, cluster, cluster_id_for
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.report import LargestCluster, largest_clusters
from golden_distill.filters.dedup.representatives import choose_representatives
from golden_distill.filters.dedup.signature import signatures


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


@dataclass(slots=True)
class DedupResult:
    """Kept rows (with ``cluster_id``/``cluster_size`` set), the cluster table, and the report."""

    representatives: pl.DataFrame
    clusters: pl.DataFrame
    kept: pl.DataFrame  # case_id, cluster_id, cluster_size, rank, replaces_excluded
    report: DedupReport
    stats: dict[str, Any]


def _no_dedup_clusters(sig: pl.DataFrame) -> pl.DataFrame:
    """Every case its own cluster (dedup disabled)."""
    ids = sig.get_column("case_id").unique().sort()
    return pl.DataFrame(
        {
            "cluster_id": [cluster_id_for(c) for c in ids.to_list()],
            "case_id": ids,
            "exact_hash": sig.unique("case_id", keep="first")
            .sort("case_id")
            .get_column("exact_hash"),
            "role": "representative",
            "merged_by": "self",
            "distance_to_representative": 0.0,
            "rank": 0,
            "cluster_size": 1,
        }
    ).cast(CLUSTER_SCHEMA)  # type: ignore[arg-type]


def attach_clusters(rows: pl.DataFrame, kept: pl.DataFrame) -> pl.DataFrame:
    """The kept rows of ``rows`` with ``cluster_id`` and ``cluster_size`` filled in."""
    base = rows.drop([c for c in ("cluster_id", "cluster_size") if c in rows.columns])
    out = base.unique("case_id", keep="first", maintain_order=True).join(
        kept.select("case_id", "cluster_id", "cluster_size"), on="case_id", how="inner"
    )
    if "cluster_id" in rows.columns:  # keep the caller's column order (GOLDEN_SCHEMA)
        out = out.select(rows.columns)
    return out.sort("case_id")


def deduplicate(
    rows: pl.DataFrame,
    cfg: DedupConfig | None = None,
    *,
    excluded_case_ids: Iterable[str] = (),
) -> DedupResult:
    """Deduplicate ``rows`` (GOLDEN_SCHEMA, or CASE_SCHEMA plus optional funnels/value_score)."""
    cfg = cfg or DedupConfig()
    excluded = list(excluded_case_ids)
    t0 = time.perf_counter()
    sig = signatures(rows, cfg)
    t1 = time.perf_counter()
    stats: dict[str, Any] = {}
    if cfg.enabled:
        clustering = cluster(sig, cfg)
        table = clustering.table
        stats = asdict(clustering.stats)
    else:
        table = _no_dedup_clusters(sig)
    kept = choose_representatives(table, excluded, cfg.keep_per_cluster)
    t2 = time.perf_counter()
    stats.setdefault("seconds", {})["signatures"] = round(t1 - t0, 3)
    stats["seconds"]["total"] = round(t2 - t0, 3)
    report = build_report(
        table,
        sig,
        kept,
        excluded_case_ids=excluded,
        largest=cfg.report_largest,
        stats=stats,
        borderline=borderline_members(table, cfg).to_dicts(),
    )
    return DedupResult(
        representatives=attach_clusters(rows, kept),
        clusters=table,
        kept=kept,
        report=report,
        stats=stats,
    )
