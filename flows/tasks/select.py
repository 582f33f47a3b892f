"""The global step: clustering of every shard's candidates, then quotas over the representatives
(``filters.selection``, the same code `golden preview` runs); for an incremental run, clustering
jointly with the previous version's representatives, then the quotas over the grown set
(``flows/tasks/grow.py``).

Only small columns travel here (ids, tenant, funnels, score, trajectory signature) and the dedup
signatures; whole cases stay in the shard files until the redact task reads the chosen ones, and
the previous version's cases stay in the store until publishing streams them (tasks/parent.py).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl
from prefect import task

from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA
from golden_distill.filters.grown_quotas import renamed_tenants
from golden_distill.flows.caching import pipeline_version
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.choice import (
    CHOICE_CLUSTER_COLUMNS,
    NOT_CHOICE_COLUMNS,
    SplitDecisions,
    choose_candidates,
    night_decisions,
    representatives_again,
)
from golden_distill.flows.tasks.dedup_step import deduplicate_candidates
from golden_distill.flows.tasks.frame_ref import FrameRef
from golden_distill.flows.tasks.grow import (
    Growth,
    grow,
    newest_per_cluster,
    published_tenant_frame,
)
from golden_distill.flows.tasks.jobs import RedactResult, ShardResult
from golden_distill.flows.tasks.parent import incremental_parent, load_parent
from golden_distill.flows.work_folder import WorkFolder


@dataclass
class Selection:
    """What quotas kept, the clusters among them, the current representatives, and (incremental
    runs) the previous version's clusters carried into this one."""

    #: new candidate ids (incremental runs; a run from sources reads them from ``decisions``)
    kept: pl.Series | None
    clusters: FrameRef | None  # the cluster table of new-only clusters (None: dedup off)
    representatives: pl.DataFrame  # new representatives: case_id, cluster_id, cluster_size
    excluded: set[str] = field(default_factory=set)  # refused by redaction
    stats: dict[str, Any] = field(default_factory=dict)
    #: a run built from sources: the decisions of every row of a case id with a candidate
    #: row (filters.selection statuses, as the select step decided; flows/tasks/choice.py) ...
    decisions: FrameRef | None = None
    #: ... and the counts of all other rows (``selection_stats``: their status never changes)
    other_counts: dict[str, Any] = field(default_factory=dict)
    #: each cluster's representative before the quotas, as the select step chose them
    #: (``filters.selection.QUOTA_ROW_COLUMNS``): a redaction round's choice starts from them
    quota_rows: FrameRef | None = None
    #: chosen again since the statuses and counts were decided (``settle`` decides them)
    unsettled: bool = False
    rejected: set[str] = field(default_factory=set)  # rejected in review (filters/review.py)
    confirmed: set[str] = field(default_factory=set)  # confirmed in review: trust human
    corrections: dict[str, dict[str, Any]] = field(default_factory=dict)  # corrected expected
    #: every candidate's tool path (case_id, path_key, trajectory), for the coverage gap
    paths: FrameRef | None = None
    parent_version: str | None = None  # the version grown (None: built from sources alone)
    carried: pl.DataFrame | None = None  # CARRIED_SCHEMA: kept previous representatives
    carried_clusters: pl.DataFrame | None = None  # their cluster rows (+ new members attached)
    last_seen: pl.DataFrame | None = None  # cluster_id -> newest member's recorded_at
    growth: Growth | None = None  # incremental runs: what the quotas over the grown set need
    #: case_id, published (pseudonymised) tenant id of redacted cases (runs from sources)
    published_tenants: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"case_id": pl.String, "published": pl.String})
    )

    def frames_present(self) -> bool:
        """False when a frame the select task wrote is gone (a cleaned work folder): a cached
        selection is then recomputed."""
        refs = (self.decisions, self.clusters, self.paths, self.quota_rows)
        return all(ref.present() for ref in refs if ref is not None)

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

    def after_redaction(
        self,
        redacted: list[RedactResult],
        refused: set[str],
        config: PipelineConfig,
        work: WorkFolder | None = None,
    ) -> bool:
        """Take a redaction round's outcome: refused cases are replaced (``exclude``); a grown
        set learns its new cases' published tenants and applies the quotas again. True when
        the representatives may have changed (another round may have cases to redact)."""
        learned = False
        if self.growth is not None:  # (also for the shares the report shows per tenant)
            learned = self.growth.learn_tenants((r.redacted_path for r in redacted), work)
        else:
            paths = (r.redacted_path for r in redacted)
            fresh = published_tenant_frame(paths, work)
            known = pl.concat([self.published_tenants, fresh], how="vertical_relaxed")
            self.published_tenants = known.unique("case_id", keep="last", maintain_order=True)
        if refused:
            self.excluded |= refused
        if refused and self.growth is None and self.quota_rows is not None:
            self._choose_again(config)
        elif refused or learned:
            self._choose(config)
        else:
            self._published_tenant_shares()
        return bool(refused or learned)

    def _choose_again(self, config: PipelineConfig) -> None:
        """After a round's refusals: only the representatives (what the next round redacts),
        from the refused cases' clusters and the quotas again; every status and count is
        decided once, by ``settle``, when the redaction workers are gone (a full choice holds
        every candidate's rows: 0.4 GB at 1M sessions, beside the workers)."""
        assert self.quota_rows is not None and self.decisions is not None
        reps = representatives_again(
            self.quota_rows.scan(),
            self.clusters.scan() if self.clusters is not None else None,
            self.decisions.scan(),
            self.excluded | self.rejected,
            config.funnels,
            config.dedup,
        )
        self.representatives = reps.drop("priority")
        self.unsettled = True

    def settle(self, config: PipelineConfig) -> None:
        """Decide the statuses and counts after the redaction rounds (one full choice). Its
        representatives must be the ones the rounds chose and redacted: a difference is a
        fault of this code, and nothing is published."""
        if not self.unsettled:
            return
        chosen = self.representatives
        self._choose(config)
        self.unsettled = False
        if not chosen.equals(self.representatives):
            raise StageError("select", "the representatives redacted differ from the final choice")

    def _published_tenant_shares(self) -> None:
        """Tenant shares (report, manifest) under the tenants' published pseudonyms: the
        selection ranks by the original ids, which must not leave the pipeline."""
        shares = self.stats.get("shares") or {}
        if self.decisions is None or not shares.get("tenant"):
            return
        known = (
            self._decided()
            .select("case_id", "tenant_id")
            .join(self.published_tenants.lazy(), on="case_id", how="inner")
            .unique("case_id")
            .filter(pl.col("tenant_id").is_not_null())
            .select("tenant_id", "published")
            .unique()
            .collect()
        )
        names = dict(zip(known["tenant_id"], known["published"], strict=True))
        names["None"] = "None"  # cases without a tenant (``shares`` names them so)
        shares["tenant"] = renamed_tenants(shares["tenant"], names)

    def apply_review(self, review: Any, config: PipelineConfig) -> None:
        """Leave out the candidates a reviewer rejected: by case id, and by content hash (the
        same run recorded again under another id); their clusters' next members replace them.
        Confirmed (and corrected) cases are published with trust ``human``."""
        self.confirmed = set(review.confirmed)
        self.corrections = dict(review.corrections)
        ids = set(review.rejected_ids)
        if self.clusters is not None and review.rejected_hashes:
            same = self.clusters.scan().filter(
                pl.col("exact_hash").is_in(list(review.rejected_hashes))
            )
            ids |= set(same.select("case_id").collect().get_column("case_id").to_list())
        if self.growth is not None:  # a carried case a reviewer rejected leaves the set too
            growth = self.growth
            if review.rejected_hashes and "exact_hash" in growth.clusters.columns:
                hashes = growth.clusters
                same = hashes.filter(pl.col("exact_hash").is_in(list(review.rejected_hashes)))
                ids |= set(same.get_column("case_id").to_list())
            growth.carried = growth.carried.filter(~pl.col("case_id").is_in(sorted(ids)))
        if ids:
            self.rejected |= ids & set(self.candidate_ids().to_list())
        if self.rejected or self.growth is not None:
            self._choose(config)

    def _choose(self, config: PipelineConfig) -> None:
        if self.decisions is None:  # incremental run: representatives of the new clusters
            clusters = self.clusters.read() if self.clusters is not None else None
            reps = global_steps.representatives(
                clusters, self.candidate_ids(), self.excluded | self.rejected, config
            )
            if self.growth is None:
                self.representatives = reps
            else:
                self._choose_grown(reps, config, self.growth)
            return
        active = self.decisions.scan().select(pl.exclude(NOT_CHOICE_COLUMNS)).collect()
        choice = choose_candidates(
            active,
            self.other_counts,
            self.clusters.read(CHOICE_CLUSTER_COLUMNS) if self.clusters is not None else None,
            config.funnels,
            config.dedup,
            self.excluded,
            self.rejected,
        )
        del active
        self.representatives = choice.chosen.representatives.drop("priority")
        self.stats.update(global_steps.selection_counts(choice.chosen, config, choice.counts))
        self._published_tenant_shares()

    def candidate_ids(self) -> pl.Series:
        """The new candidates' ids (the quotas run after dedup)."""
        if self.kept is not None:
            return self.kept
        decided = self._decided().filter(pl.col("candidate")).select("case_id").unique()
        return decided.collect().get_column("case_id")

    def _decided(self) -> pl.LazyFrame:
        """The candidates' decisions as the select step wrote them: a choice made again since
        (a refusal, a review) changed only their status, not the columns read from here."""
        assert self.decisions is not None
        return self.decisions.scan()

    def _choose_grown(self, reps: pl.DataFrame, config: PipelineConfig, growth: Growth) -> None:
        """The quotas over the carried cases and the new representatives ``reps``: a new case
        cut is not published, a carried case cut leaves the set (``left_the_set``)."""
        quotas = growth.quotas(reps, config)
        self.representatives = reps.filter(pl.col("case_id").is_in(quotas.kept_new.implode()))
        left = quotas.left.get_column("case_id").implode()
        self.carried = growth.carried.filter(~pl.col("case_id").is_in(left))
        self.carried_clusters = growth.clusters.filter(
            pl.col("cluster_id").is_in(self.carried.get_column("cluster_id").implode())
        )
        self.stats.update(growth.stats(quotas))
        self.stats.setdefault("incremental", {}).update(
            carried=self.carried.height, new_representatives=self.representatives.height
        )

    def prechecked(self) -> pl.DataFrame | None:
        """Steps digests of the carried cases: the previous version passed the replay check
        with them, so publish checks only the cases whose steps differ (the new ones)."""
        growth = self.growth
        if growth is None or growth.step_digests is None or self.carried is None:
            return None
        ids = self.carried.get_column("case_id").implode()
        return growth.step_digests.filter(pl.col("case_id").is_in(ids))

    def published_columns(self) -> pl.DataFrame:
        """The representatives with the review marks and, for a run built from sources, the
        pipeline columns the global decisions give them (funnels, funnel_reasons, value_score:
        the batch-wide pass, not the shard's)."""
        reps = self.representatives
        if self.decisions is not None:  # a representative's first row is its selected one
            decided = (
                self._decided()
                .with_row_index("_row")
                .filter(pl.col("candidate"))
                .join(reps.lazy().select("case_id"), on="case_id", how="semi")
                .sort("_row")
                .unique("case_id", keep="first", maintain_order=True)
                .select(
                    "case_id", "funnels", pl.col("funnel_reasons").cast(pl.String), "value_score"
                )
                .collect()
            )
            reps = reps.join(decided, on="case_id", how="left")
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

    def published_clusters(self, folder: Path) -> Path | None:
        """The version's cluster table (every member row, with each cluster's last-seen time),
        streamed to a Parquet file in ``folder`` (a local scratch folder): the store writes it
        one range of clusters at a time, so no process holds the night's clusters."""
        frames = []
        if self.clusters is not None:
            frames.append(self.clusters.scan().select(list(CLUSTER_SCHEMA)))
        if self.carried_clusters is not None:
            frames.append(self.carried_clusters.lazy().select(list(CLUSTER_SCHEMA)))
        if not frames:
            return None
        table = pl.concat(frames, how="vertical_relaxed")
        if self.last_seen is not None:
            table = table.join(self.last_seen.lazy(), on="cluster_id", how="left")
        path = folder / "clusters.parquet"
        table.sink_parquet(path)
        return path


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
    work = resolved.work
    try:
        source = incremental_parent(resolved)
        parent = load_parent(source, resolved) if source is not None else None
    except Exception as exc:
        raise StageError("select", f"reading the previous version: {describe(exc)}") from None
    try:
        if parent is None:
            split = night_decisions(results, config, work)
        else:
            decisions = global_steps.compact_decisions(
                global_steps.batch_wide(
                    global_steps.load_decisions(results, work), results, config, work
                )
            )
    except Exception as exc:
        raise StageError("select", describe(exc)) from None
    try:
        if parent is None:
            folder = selection_folder(work, cache_key)
            return _from_sources(results, config, split, work, folder)
        return _grown(results, config, decisions, parent, resolved)
    except StageError:
        raise
    except Exception as exc:
        raise StageError("dedup", describe(exc)) from None


def selection_folder(work: WorkFolder, cache_key: str | None) -> str:
    """Where a selection's large frames are written (``FrameRef``): named by its cache key, so
    a cached selection finds them and work-folder pruning keeps them with its result."""
    name = f"selection-{cache_key[:16]}" if cache_key else f"selection-{time.time_ns()}"
    return work.join("shards", name)


def _from_sources(
    results: list[ShardResult],
    config: PipelineConfig,
    split: SplitDecisions,
    work: WorkFolder,
    folder: str,
) -> Selection:
    """Cluster every candidate, one representative per cluster, then the quotas over those.

    The candidates' decisions, the cluster table and the candidates' paths go to ``folder``
    (see ``FrameRef``); the returned ``Selection`` holds only what redaction needs in memory."""
    active, other_counts = split.take_active(), split.other_counts
    candidates = active.filter(pl.col("candidate")).get_column("case_id")
    dedup = deduplicate_candidates(results, candidates, active, config.dedup, work, folder)
    del candidates
    clusters, seen = dedup.clusters, dedup.seen
    dedup = replace(dedup, clusters=None, seen=seen.clear())
    # the whole cluster table goes to its file before the choice, which reads a few of its
    # columns: the choice's peak (2M sessions: the select worker's) holds neither the other
    # columns nor the file's write buffers
    clusters_ref = (
        None if clusters is None else FrameRef.spill(clusters, work, f"{folder}/clusters.parquet")
    )
    last_seen = newest_per_cluster(clusters, seen)
    del seen
    if clusters is not None:
        clusters = clusters.select(CHOICE_CLUSTER_COLUMNS)
    choice = choose_candidates(active, other_counts, clusters, config.funnels, config.dedup, set())
    del active, clusters  # decided now (``choice``): the night's rows are not held twice
    chosen = choice.chosen
    quota_rows = chosen.quota_rows
    assert quota_rows is not None
    stats = {**dedup.stats, **global_steps.selection_counts(chosen, config, choice.counts)}
    decisions = FrameRef.spill(chosen.decisions, work, f"{folder}/decisions.parquet")
    quota_ref = FrameRef.spill(quota_rows, work, f"{folder}/quota_rows.parquet")
    representatives = chosen.representatives.drop("priority")
    del choice, chosen, quota_rows  # spilled: only the small frames go back to the flow
    return Selection(
        kept=None,
        clusters=clusters_ref,
        representatives=representatives,
        stats=stats,
        last_seen=last_seen,
        decisions=decisions,
        other_counts=other_counts,
        quota_rows=quota_ref,
        paths=dedup.paths,
    )


def _grown(
    results: list[ShardResult],
    config: PipelineConfig,
    decisions: pl.DataFrame,
    parent: Any,
    resolved: ResolvedRun,
) -> Selection:
    """The previous version grown by this window: joint clustering, then the quotas."""
    grown = grow(results, config, decisions, parent, resolved)
    selection = Selection(
        kept=grown.new,
        clusters=None if grown.clusters is None else FrameRef.held(grown.clusters),
        representatives=grown.representatives,
        stats=grown.stats,
        parent_version=parent.version,
        carried=grown.growth.carried,
        carried_clusters=grown.growth.clusters,
        last_seen=grown.last_seen,
        growth=grown.growth,
    )
    selection._choose(config)
    return selection
