"""The global step: clustering of every shard's candidates, then quotas over the representatives
(``filters.selection``, the same code `golden preview` runs); for an incremental run, quotas over
the new candidates, then clustering jointly with the previous version's representatives.

Only small columns travel here (ids, tenant, funnels, score, trajectory signature) and the dedup
signatures; whole cases stay in the shard files until the redact task reads the chosen ones, and
the previous version's cases stay in the store until publishing streams them (tasks/parent.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa
from prefect import task

from golden_distill.datasets.incremental import age_out, attach_new, carried_from_parent
from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA
from golden_distill.flows.caching import pipeline_version
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.tasks.parent import incremental_parent, load_parent
from golden_distill.flows.work_folder import WorkFolder


@dataclass
class Selection:
    """What quotas kept, the clusters among them, the current representatives, and (incremental
    runs) the previous version's clusters carried into this one."""

    kept: pl.Series  # new case ids the quotas keep (all candidates when quotas run after dedup)
    clusters: pl.DataFrame | None  # the cluster table of new-only clusters (None: dedup off)
    representatives: pl.DataFrame  # new representatives: case_id, cluster_id, cluster_size
    excluded: set[str] = field(default_factory=set)  # refused by redaction
    stats: dict[str, Any] = field(default_factory=dict)
    #: every case's decision with its status (filters.selection), for a run built from sources
    decisions: pl.DataFrame | None = None
    rejected: set[str] = field(default_factory=set)  # rejected in review (filters/review.py)
    confirmed: set[str] = field(default_factory=set)  # confirmed in review: trust human
    corrections: dict[str, dict[str, Any]] = field(default_factory=dict)  # corrected expected
    #: every candidate's tool path (case_id, path_key, trajectory), for the coverage gap
    paths: pl.DataFrame | None = None
    parent_version: str | None = None  # the version grown (None: built from sources alone)
    carried: pl.DataFrame | None = None  # CARRIED_SCHEMA: kept previous representatives
    carried_clusters: pl.DataFrame | None = None  # their cluster rows (+ new members attached)
    last_seen: pl.DataFrame | None = None  # cluster_id -> newest member's recorded_at

    @property
    def selected_count(self) -> int:
        carried = self.carried.height if self.carried is not None else 0
        return self.representatives.height + carried

    def new_representative_ids(self) -> pl.Series:
        return self.representatives.get_column("case_id")

    def exclude(self, case_ids: set[str], config: PipelineConfig) -> None:
        """Drop cases redaction refused; the next member of each cluster takes their place
        (and the quotas are applied again to the new representatives)."""
        self.excluded |= case_ids
        self._choose(config)

    def apply_review(self, review: Any, config: PipelineConfig) -> None:
        """Leave out the candidates a reviewer rejected: by case id, and by content hash (the
        same run recorded again under another id); their clusters' next members replace them.
        Confirmed (and corrected) cases are published with trust ``human``."""
        self.confirmed = set(review.confirmed)
        self.corrections = dict(review.corrections)
        ids = set(review.rejected_ids)
        if self.clusters is not None and review.rejected_hashes:
            same = self.clusters.filter(pl.col("exact_hash").is_in(list(review.rejected_hashes)))
            ids |= set(same.get_column("case_id").to_list())
        if self.carried is not None:  # a carried case a reviewer rejected leaves the set too
            if self.carried_clusters is not None and review.rejected_hashes:
                hashes = self.carried_clusters
                if "exact_hash" in hashes.columns:
                    same = hashes.filter(pl.col("exact_hash").is_in(list(review.rejected_hashes)))
                    ids |= set(same.get_column("case_id").to_list())
            self.carried = self.carried.filter(~pl.col("case_id").is_in(sorted(ids)))
        self.rejected |= ids & set(self.kept.to_list())
        if self.rejected:
            self._choose(config)

    def _choose(self, config: PipelineConfig) -> None:
        if self.decisions is None:  # incremental run: representatives of the new clusters
            self.representatives = global_steps.representatives(
                self.clusters, self.kept, self.excluded | self.rejected, config
            )
            return
        chosen = global_steps.choose(
            self.decisions, self.clusters, config, self.excluded, self.rejected
        )
        self.decisions = chosen.decisions
        self.representatives = chosen.representatives.drop("priority")
        self.stats.update(global_steps.selection_counts(chosen, config))

    def published_columns(self) -> pl.DataFrame:
        """The representatives with the review marks and, for a run built from sources, the
        pipeline columns the global decisions give them (funnels, funnel_reasons, value_score:
        the batch-wide pass, not the shard's)."""
        reps = self.representatives
        if self.decisions is not None:
            decided = self.decisions.filter(pl.col("status") == "selected").unique(
                "case_id", keep="first"
            )
            reps = reps.join(
                decided.select("case_id", "funnels", "funnel_reasons", "value_score"),
                on="case_id",
                how="left",
            )
        return self.review_marks(reps)

    def review_marks(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` with the reviewers' marks: confirmed, corrected expected state/actions."""
        return frame.with_columns(
            _confirmed=pl.col("case_id").is_in(sorted(self.confirmed)),
            _expected_final_state=pl.col("case_id").replace_strict(
                {k: v["final_state"] for k, v in self.corrections.items()},
                default=None,
                return_dtype=pl.String,
            ),
            _expected_actions=pl.col("case_id").replace_strict(
                {k: v["actions"] for k, v in self.corrections.items()},
                default=None,
                return_dtype=pl.String,
            ),
        )

    def published_clusters(self) -> pa.Table | None:
        """The version's cluster table: every member row, with each cluster's last-seen time."""
        frames = []
        if self.clusters is not None:
            frames.append(self.clusters.select(list(CLUSTER_SCHEMA)))
        if self.carried_clusters is not None:
            frames.append(self.carried_clusters.select(list(CLUSTER_SCHEMA)))
        if not frames:
            return None
        table = pl.concat(frames, how="vertical_relaxed")
        if self.last_seen is not None:
            table = table.join(self.last_seen, on="cluster_id", how="left")
        return table.to_arrow()


def parent_key(resolved: ResolvedRun) -> str | None:
    """What the previous version contributes to the selection's cache key."""
    parent = incremental_parent(resolved)
    if parent is None:
        return None
    return f"{parent.version}\x1f{resolved.until}\x1f{resolved.config.selection.max_age_days}"


def selection_cache_key(
    shard_keys: list[str | None], config: PipelineConfig, parent: str | None = None
) -> str | None:
    """Same shard results + same funnel/dedup config + same code (+ same previous version) =
    the same selection."""
    if not shard_keys or any(k is None for k in shard_keys):
        return None
    digest = hashlib.sha256(pipeline_version().encode())
    digest.update(config.model_dump_json(include={"funnels", "dedup", "selection"}).encode())
    digest.update((parent or "-").encode())
    for key in sorted(k for k in shard_keys if k):
        digest.update(key.encode())
    return digest.hexdigest()


def _select_cache_key(context: object, parameters: dict[str, Any]) -> str | None:
    return parameters.get("cache_key")


def _newest_per_cluster(table: pl.DataFrame | None, seen: pl.DataFrame) -> pl.DataFrame:
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


@task(name="select-and-dedup", cache_key_fn=_select_cache_key, persist_result=True)
def select_cases(
    results: list[ShardResult], resolved: ResolvedRun, cache_key: str | None = None
) -> Selection:
    """Apply quotas to the union of shard candidates, then cluster and pick representatives;
    an incremental run clusters them with the previous version's representatives (new
    near-duplicates join those clusters) and lets clusters not seen for `max_age_days` go.

    Cached under ``cache_key`` (see ``selection_cache_key``): a rerun over unchanged shards
    skips the global dedup too."""
    config = resolved.config
    try:
        work = resolved.work
        decisions = global_steps.batch_wide(
            global_steps.load_decisions(results, work), results, config, work
        )
    except Exception as exc:
        raise StageError("select", describe(exc)) from None
    try:
        source = incremental_parent(resolved)
        parent = load_parent(source, resolved) if source is not None else None
    except Exception as exc:
        raise StageError("select", f"reading the previous version: {describe(exc)}") from None
    try:
        if parent is None:
            return _from_sources(results, config, decisions, work)
        kept, quota_stats = global_steps.quota_kept(decisions, config)
        return _grow(results, config, kept, quota_stats, parent, resolved)
    except StageError:
        raise
    except Exception as exc:
        raise StageError("dedup", describe(exc)) from None


def _from_sources(
    results: list[ShardResult], config: PipelineConfig, decisions: pl.DataFrame, work: WorkFolder
) -> Selection:
    """Cluster every candidate, one representative per cluster, then the quotas over those."""
    candidates = decisions.filter(pl.col("candidate")).get_column("case_id")
    signatures = global_steps.with_decided_scores(
        global_steps.load_signatures(results, candidates, work), decisions
    )
    clusters, dedup_stats = global_steps.deduplicate(signatures, config)
    chosen = global_steps.choose(decisions, clusters, config, set())
    seen = signatures.select("case_id", "recorded_at")
    return Selection(
        kept=candidates.unique(),
        clusters=clusters,
        representatives=chosen.representatives.drop("priority"),
        stats={**dedup_stats, **global_steps.selection_counts(chosen, config)},
        last_seen=_newest_per_cluster(clusters, seen),
        decisions=chosen.decisions,
        paths=signatures.select("case_id", "path_key", "trajectory"),
    )


def _grow(
    results: list[ShardResult],
    config: PipelineConfig,
    kept: pl.Series,
    quota_stats: dict[str, Any],
    parent: Any,
    resolved: ResolvedRun,
) -> Selection:
    carried = carried_from_parent(parent.cases, parent.clusters)
    carried, left = age_out(carried, resolved.until, config.selection.max_age_days)
    known = set(parent.cases.get_column("case_id").to_list())
    if parent.clusters is not None:
        known |= set(parent.clusters.get_column("case_id").to_list())
    new = kept.filter(~kept.is_in(pl.Series(list(known), dtype=pl.String).implode()))
    signatures = global_steps.load_signatures(results, new, resolved.work)
    seen = signatures.select("case_id", "recorded_at")
    attached = None
    if config.dedup.enabled and parent.signatures is not None:
        old = parent.signatures.filter(
            pl.col("case_id").is_in(carried.get_column("case_id").implode())
        )
        joint, dedup_stats = global_steps.deduplicate(pl.concat([old, signatures]), config)
        if joint is None:
            joint = pl.DataFrame(schema=CLUSTER_SCHEMA)
        carried, attached, clusters = attach_new(carried, joint, seen)
    else:
        clusters, dedup_stats = global_steps.deduplicate(signatures, config)
    reps = global_steps.representatives(clusters, new, set(), config)
    carried_clusters = _carried_cluster_rows(parent.clusters, carried, attached)
    last_seen = pl.concat(
        [
            _newest_per_cluster(clusters, seen),
            carried.select("cluster_id", "last_seen").unique("cluster_id"),
        ],
        how="vertical_relaxed",
    )
    dedup_stats["removed_by_dedup"] = int(new.len()) - reps.height
    stats = {
        **quota_stats,
        **dedup_stats,
        "incremental": {
            "parent": parent.version,
            "carried": carried.height,
            "already_published": int(kept.len() - new.len()),
            "joined_existing_clusters": attached.height if attached is not None else 0,
            "new_representatives": reps.height,
        },
        "left_the_set": {"aged_out": left.height} if left.height else {},
    }
    return Selection(
        kept=new,
        clusters=clusters,
        representatives=reps,
        stats=stats,
        parent_version=parent.version,
        carried=carried,
        carried_clusters=carried_clusters,
        last_seen=last_seen,
    )


def _carried_cluster_rows(
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
