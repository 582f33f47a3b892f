"""One-call dedup over a frame of cases: signatures, clustering, representatives, report.

The flow uses the two phases separately (``signatures`` per shard, ``cluster`` globally, then
``choose_representatives``); this wrapper chains them for a single frame, which is what tests,
the preview run and the benchmark need.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from golden_distill.filters.dedup.borderline import borderline_members
from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA, cluster, cluster_id_for
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.report import DedupReport, build_report
from golden_distill.filters.dedup.representatives import choose_representatives
from golden_distill.filters.dedup.signature import signatures


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
