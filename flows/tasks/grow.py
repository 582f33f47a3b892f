"""The global step of an incremental run: this window's candidates clustered jointly with the
previous version's representatives (``datasets/incremental.py``), then the quotas over the
grown set (``filters/grown_quotas.py``), re-applied whenever redaction replaces a case or tells
the new cases' published tenants.

Wiring only: the decisions are the pure functions named above; this module loads their inputs
(small frames) and keeps what the quotas need to run again (``Growth``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from golden_distill.datasets.incremental import age_out, attach_new, carried_from_parent
from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA
from golden_distill.filters.dedup.signature import with_tenants
from golden_distill.filters.grown_quotas import (
    QUOTA_COLUMNS,
    GrownQuotas,
    grown_quotas,
    left_counts,
    tenant_keys,
)
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.work_folder import WorkFolder


@dataclass
class Growth:
    """What the quotas over a grown set need, kept so they can run again: the carried cases
    before the quotas (after retention and review), their cluster rows, the quota columns of
    carried and new cases, and what redaction told (case_id -> published tenant id)."""

    carried: pl.DataFrame  # CARRIED_SCHEMA, before the quotas
    clusters: pl.DataFrame  # CLUSTER_SCHEMA rows of the carried clusters (+ new members)
    carried_rows: pl.DataFrame  # QUOTA_COLUMNS of the carried cases (published tenant ids)
    new_rows: pl.DataFrame  # QUOTA_COLUMNS of this window's candidates (original tenant ids)
    aged_out: int = 0
    #: the carried cases retention let go (case_id, reason ``aged_out``)
    aged_out_ids: pl.DataFrame | None = None
    published_tenants: dict[str, str] = field(default_factory=dict)
    step_digests: pl.DataFrame | None = None  # the parent's (see Parent.step_digests)

    def quotas(self, reps: pl.DataFrame, config: PipelineConfig) -> GrownQuotas:
        """The quotas over the carried cases and the new representatives ``reps``."""
        ids = self.carried.get_column("case_id").implode()
        new = self.new_rows.join(reps.select("case_id"), on="case_id", how="semi")
        return grown_quotas(
            self.carried_rows.filter(pl.col("case_id").is_in(ids)),
            tenant_keys(new, self.published_tenants),
            config.funnels,
            config.selection.carried_first,
        )

    def stats(self, quotas: GrownQuotas) -> dict[str, Any]:
        return {
            "cut_by_quotas": quotas.cut_new,
            "after_quotas": quotas.kept,
            "shares": quotas.shares,
            "left_the_set": left_counts(self.aged_out, quotas.left),
        }

    def learn_tenants(self, redacted_paths: Iterable[str], work: WorkFolder | None = None) -> bool:
        """Read the published tenant of every redacted new case; True when one was new."""
        learned = published_tenants(redacted_paths, work)
        fresh = {k: v for k, v in learned.items() if self.published_tenants.get(k) != v}
        self.published_tenants.update(fresh)
        return bool(fresh)


def published_tenant_frame(
    redacted_paths: Iterable[str], work: WorkFolder | None = None
) -> pl.DataFrame:
    """case_id, published (tenant id) of redacted (published-form) case files with a tenant:
    two small columns, read through the run's work folder (local or remote)."""
    paths = list(redacted_paths)
    folder = global_steps.work_of(paths, work)
    frames = [folder.read_frame(path, columns=["case_id", "tenant_id"]) for path in paths]
    return (
        (
            pl.concat(frames, how="vertical_relaxed")
            if frames
            else pl.DataFrame(schema={"case_id": pl.String, "tenant_id": pl.String})
        )
        .filter(pl.col("tenant_id").is_not_null() & (pl.col("tenant_id") != ""))
        .rename({"tenant_id": "published"})
    )


def published_tenants(
    redacted_paths: Iterable[str], work: WorkFolder | None = None
) -> dict[str, str]:
    """``published_tenant_frame`` as case_id -> tenant_id."""
    frame = published_tenant_frame(redacted_paths, work)
    return dict(zip(frame["case_id"], frame["published"], strict=True))


@dataclass
class Grown:
    """The joint clustering's result, before the quotas (see ``grow``)."""

    new: pl.Series
    clusters: pl.DataFrame | None
    representatives: pl.DataFrame
    stats: dict[str, Any]
    last_seen: pl.DataFrame
    growth: Growth


def grow(
    results: list[ShardResult],
    config: PipelineConfig,
    decisions: pl.DataFrame,
    parent: Any,
    resolved: ResolvedRun,
) -> Grown:
    """Every new candidate clustered with the carried representatives (dedup then quotas, as
    a rebuild): new near-duplicates join carried clusters, new-only clusters get their own
    representatives; the caller applies the quotas (``Growth.quotas``)."""
    kept, funnel_stats = global_steps.funnel_counts(decisions, config)
    carried = carried_from_parent(parent.cases, parent.clusters)
    carried, left = age_out(carried, resolved.until, config.selection.max_age_days)
    known = set(parent.cases.get_column("case_id").to_list())
    if parent.clusters is not None:
        known |= set(parent.clusters.get_column("case_id").to_list())
    new = kept.filter(~kept.is_in(pl.Series(list(known), dtype=pl.String).implode()))
    signatures = global_steps.load_signatures(results, new, resolved.work)
    # the new candidates' tenants as they will be published: the parent's cases carry those
    # (dedup's tenant partition and the quotas compare both sides so before redaction runs)
    tenants = published_form_tenants(decisions.filter(pl.col("candidate")), config)
    seen = signatures.select("case_id", "recorded_at")
    attached = None
    if config.dedup.enabled and parent.signatures is not None:
        old = parent.signatures.filter(
            pl.col("case_id").is_in(carried.get_column("case_id").implode())
        )
        # the parent's signatures hold published tenant ids: compare the new ones so too
        joint, dedup_stats = global_steps.deduplicate(
            pl.concat([old, with_tenants(signatures, tenants)]), config
        )
        if joint is None:
            joint = pl.DataFrame(schema=CLUSTER_SCHEMA)
        carried, attached, clusters = attach_new(carried, joint, seen)
    else:
        clusters, dedup_stats = global_steps.deduplicate(signatures, config)
    reps = global_steps.representatives(clusters, new, set(), config)
    last_seen = pl.concat(
        [
            newest_per_cluster(clusters, seen),
            carried.select("cluster_id", "last_seen").unique("cluster_id"),
        ],
        how="vertical_relaxed",
    )
    dedup_stats["removed_by_dedup"] = int(new.len()) - reps.height
    stats = {
        **funnel_stats,
        **dedup_stats,
        "incremental": {
            "parent": parent.version,
            "carried": carried.height,
            "already_published": int(kept.len() - new.len()),
            "joined_existing_clusters": attached.height if attached is not None else 0,
            "new_representatives": reps.height,
        },
    }
    candidates = decisions.filter(pl.col("candidate")).unique("case_id", keep="first")
    growth = Growth(
        carried=carried,
        clusters=carried_cluster_rows(parent.clusters, carried, attached),
        carried_rows=parent.cases.select(QUOTA_COLUMNS),
        new_rows=candidates.filter(pl.col("case_id").is_in(new.implode())).select(QUOTA_COLUMNS),
        aged_out=left.height,
        aged_out_ids=left.select("case_id", "reason"),
        step_digests=parent.step_digests,
        published_tenants=dict(
            tenants.filter(pl.col("case_id").is_in(new.implode()))
            .drop_nulls("tenant_id")
            .iter_rows()
        ),
    )
    return Grown(new, clusters, reps, stats, last_seen, growth)


def published_form_tenants(candidates: pl.DataFrame, config: PipelineConfig) -> pl.DataFrame:
    """case_id, tenant_id of ``candidates`` as redaction will publish it: the keyed pseudonym
    of the tenant key type (``redaction.key_fields``), before any collision widening (a
    widened one only keeps a case apart from its cluster, never merges it wrongly)."""
    from golden_distill.flows.tasks.task_guards import run_key
    from golden_distill.redaction.pseudonym import key_pseudonym

    rule = next((k for k in config.redaction.key_fields if "tenant_id" in k.columns), None)
    frame = candidates.select("case_id", "tenant_id").unique("case_id", keep="first")
    if rule is None:  # tenant ids are published as they are
        return frame
    secret = run_key(config, None).secret
    names = frame.get_column("tenant_id").drop_nulls().unique().to_list()
    published = {t: key_pseudonym(t, rule.key_type, secret, rule.prefix) for t in names}
    return frame.with_columns(
        pl.col("tenant_id").replace_strict(published, default=None, return_dtype=pl.String)
    )


def newest_per_cluster(table: pl.DataFrame | None, seen: pl.DataFrame) -> pl.DataFrame:
    """cluster_id -> the newest member's recorded_at."""
    if table is None:
        return pl.DataFrame(
            schema={"cluster_id": pl.String(), "last_seen": seen.schema["recorded_at"]}
        )
    return (
        table.select("cluster_id", "case_id")
        .join(seen, on="case_id", how="left")
        .group_by("cluster_id")
        .agg(pl.col("recorded_at").max().alias("last_seen"))
    )


def carried_cluster_rows(
    parent_clusters: pl.DataFrame | None, carried: pl.DataFrame, attached: pl.DataFrame | None
) -> pl.DataFrame:
    """Cluster rows of the carried clusters: the previous version's rows (or a representative
    row when it had none), the new members attached, every row with the grown size."""
    sizes = carried.select("cluster_id", "cluster_size")
    rep_rows = carried.select(
        "cluster_id",
        "case_id",
        pl.lit(None, dtype=pl.String).alias("exact_hash"),
        pl.lit("representative").alias("role"),
        pl.lit("self").alias("merged_by"),
        pl.lit(0.0).alias("distance_to_representative"),
        pl.lit(0, dtype=pl.Int32).alias("rank"),
    )
    frames = []
    if parent_clusters is not None:
        old = parent_clusters.select([c for c in CLUSTER_SCHEMA if c != "cluster_size"]).filter(
            pl.col("cluster_id").is_in(sizes.get_column("cluster_id").implode())
        )
        frames.append(old)
        rep_rows = rep_rows.filter(
            ~pl.col("cluster_id").is_in(old.get_column("cluster_id").implode())
        )
    frames.append(rep_rows)
    if attached is not None and attached.height:
        frames.append(
            attached.select(
                "cluster_id",
                "case_id",
                "exact_hash",
                pl.lit("member").alias("role"),
                "merged_by",
                "distance_to_representative",
                pl.lit(None, dtype=pl.Int32).alias("rank"),
            )
        )
    rows = pl.concat(frames, how="vertical_relaxed").join(sizes, on="cluster_id", how="left")
    return rows.select(list(CLUSTER_SCHEMA)).cast(CLUSTER_SCHEMA)  # type: ignore[arg-type]
