"""The global selection: dedup the funnel candidates, then quotas over the representatives.

One function pair, shared by the nightly flow and `golden preview` so that a preview selects
exactly the cases a run publishes (redaction aside):

1. ``cluster_candidates``: the candidates' dedup signatures -> the cluster table (every
   candidate, ranked best-first inside its cluster), or None when dedup is off;
2. ``choose``: one representative per cluster (``keep_per_cluster``), skipping cases redaction
   refused, then the quotas over those representatives, so that fractional caps are shares of
   the published set.

Every input case ends with a ``status`` that says why it is or is not published: ``selected``,
``no_funnel``, ``gate:<reason>``, ``dedup:exact`` / ``dedup:near`` (a member of a cluster whose
representative is published or cut), ``dedup:duplicate_id`` (the same run read twice),
``quota:<reason>``, ``redaction:refused``, ``review:rejected`` (a person rejected the case or a
run with the same content). Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.dedup.cluster import cluster
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.representatives import choose_representatives
from golden_distill.filters.quotas import apply_quotas, shares
from golden_distill.filters.registry import build_funnels

SELECTED = "selected"
REFUSED = "redaction:refused"
REJECTED = "review:rejected"
DUPLICATE_ID = "dedup:duplicate_id"

#: Columns of the representatives frame (the cases to publish), in priority order.
REPRESENTATIVE_COLUMNS = ("case_id", "cluster_id", "cluster_size", "priority")
#: What the quotas read of a representative (``apply_quotas``).
QUOTA_COLUMNS = ("case_id", "tenant_id", "signature", "value_score", "funnels")
#: A representative before the quotas: its quota columns and its cluster.
QUOTA_ROW_COLUMNS = (*QUOTA_COLUMNS, "cluster_id", "cluster_size")


@dataclass(slots=True)
class Chosen:
    """``decisions``: every input row with ``status``, ``priority`` (quota order of the
    representatives), ``cluster_id`` and ``cluster_size`` (candidates). ``representatives``:
    the cases to publish (REPRESENTATIVE_COLUMNS). ``shares``: tenant and funnel shares of them
    against their caps."""

    decisions: pl.DataFrame
    representatives: pl.DataFrame
    shares: dict[str, Any] = field(default_factory=dict)
    #: the quotas' input: each cluster's representative before the quotas
    #: (QUOTA_ROW_COLUMNS), what ``requota`` starts from when only a few clusters change
    quota_rows: pl.DataFrame | None = None


def cluster_candidates(
    decisions: pl.DataFrame, signatures: pl.DataFrame, cfg: DedupConfig
) -> pl.DataFrame | None:
    """The cluster table of every candidate's signature (None: dedup off)."""
    if not cfg.enabled:
        return None
    ids = decisions.filter(pl.col("candidate")).get_column("case_id")
    return cluster(signatures.filter(pl.col("case_id").is_in(ids.implode())), cfg).table


def _representatives(
    candidates: pl.DataFrame,
    clusters: pl.DataFrame | None,
    excluded: list[str],
    cfg: DedupConfig,
) -> pl.DataFrame:
    """case_id, cluster_id, cluster_size of the best members of each cluster not excluded."""
    if clusters is None:
        return candidates.select(
            "case_id",
            cluster_id=pl.lit(None, dtype=pl.String),
            cluster_size=pl.lit(None, dtype=pl.Int32),
        ).filter(~pl.col("case_id").is_in(excluded))
    chosen = choose_representatives(clusters, excluded, cfg.keep_per_cluster)
    return chosen.select("case_id", "cluster_id", "cluster_size")


def choose(
    decisions: pl.DataFrame,
    clusters: pl.DataFrame | None,
    funnels: FunnelsConfig,
    dedup: DedupConfig,
    excluded: Iterable[str] = (),
    rejected: Iterable[str] = (),
) -> Chosen:
    """Representatives of the candidates' clusters, then quotas over them; see the module
    docstring for the statuses. ``excluded``: refused by redaction; ``rejected``: in review.
    Either way the next member of the case's cluster takes its place."""
    rejected_ids = sorted(set(rejected))
    excluded_ids = sorted(set(excluded) | set(rejected_ids))
    order = [f.name for f in build_funnels(funnels) if f.role == "select"]
    rows = decisions.drop(
        [c for c in ("priority", "cluster_id", "cluster_size") if c in decisions.columns]
    ).with_row_index("_row")
    first = pl.col("_row") == pl.col("_row").min().over("case_id")
    candidates = rows.filter(pl.col("candidate") & first)
    reps = _representatives(candidates, clusters, excluded_ids, dedup)
    rep_rows = candidates.join(reps.select("case_id"), on="case_id", how="semi")
    quota_rows = rep_rows.select(QUOTA_COLUMNS).join(
        reps.select("case_id", "cluster_id", "cluster_size"), on="case_id", how="left"
    )
    ranked = apply_quotas(quota_rows.select(QUOTA_COLUMNS), funnels.quotas, order)
    kept = ranked.filter(pl.col("quota_cut").is_null())
    membership = (
        clusters.select("case_id", "cluster_id", "cluster_size", "merged_by")
        if clusters is not None
        else reps.select("case_id", "cluster_id", "cluster_size", merged_by=pl.lit("self"))
    )
    status = (
        pl.when(~pl.col("candidate"))
        .then(pl.col("status"))
        .when(~first)
        .then(pl.lit(DUPLICATE_ID))
        .when(pl.col("case_id").is_in(rejected_ids))
        .then(pl.lit(REJECTED))
        .when(pl.col("case_id").is_in(excluded_ids))
        .then(pl.lit(REFUSED))
        .when(pl.col("quota_cut").is_not_null())
        .then(pl.format("quota:{}", "quota_cut"))
        .when(pl.col("priority").is_not_null())
        .then(pl.lit(SELECTED))
        .otherwise(pl.format("dedup:{}", pl.col("merged_by").fill_null("near")))
    )
    decided = (
        rows.join(
            ranked.select("case_id", "priority", "quota_cut"),
            on="case_id",
            how="left",
            maintain_order="left",
        )
        .join(membership, on="case_id", how="left", maintain_order="left")
        .with_columns(status=status)
        .with_columns(
            priority=pl.when(first & pl.col("candidate")).then(pl.col("priority")),
            cluster_id=pl.when(pl.col("candidate")).then(pl.col("cluster_id")),
            cluster_size=pl.when(pl.col("candidate")).then(pl.col("cluster_size")),
        )
        .drop("_row", "quota_cut", "merged_by")
    )
    return Chosen(
        decisions=decided,
        representatives=_published(kept, reps),
        shares=shares(kept, funnels.quotas, order),
        quota_rows=quota_rows,
    )


def _published(kept: pl.DataFrame, reps: pl.DataFrame) -> pl.DataFrame:
    """The kept representatives (REPRESENTATIVE_COLUMNS) in priority order."""
    return (
        kept.select("case_id", "priority")
        .join(reps.select("case_id", "cluster_id", "cluster_size"), on="case_id", how="left")
        .select(REPRESENTATIVE_COLUMNS)
        .sort("priority")
    )


def requota(rows: pl.DataFrame, funnels: FunnelsConfig) -> pl.DataFrame:
    """The quotas again over ``rows``, every cluster's representative (QUOTA_ROW_COLUMNS):
    the published representatives ``choose`` gives for them, without deciding every
    candidate's status. What a redaction round needs when a few clusters changed their
    representative (the flow keeps the others' rows: flows/tasks/choice.py)."""
    order = [f.name for f in build_funnels(funnels) if f.role == "select"]
    ranked = apply_quotas(rows.select(QUOTA_COLUMNS), funnels.quotas, order)
    return _published(ranked.filter(pl.col("quota_cut").is_null()), rows)
