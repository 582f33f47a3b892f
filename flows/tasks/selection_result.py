"""What the select step chose (``flows/tasks/select.py``), and how that changes after it: cases
redaction refused leave and their clusters choose again, review decisions apply, and an
incremental run's grown set settles. Small columns only: ids, clusters, representatives.

The decisions are ``filters/reselection.py``'s (what a round or a review changes) and
``filters/selection.py``'s (the choice); this class holds the frames between the flow's steps
and wires them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA
from golden_distill.filters.grown_quotas import renamed_tenants
from golden_distill.filters.refusal_accounting import refusal_accounting
from golden_distill.filters.reselection import (
    CHOICE_CLUSTER_COLUMNS,
    Next,
    after_round,
    carried_left,
    grown_statuses,
    representatives_again,
    review_left_out,
)
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.errors import StageError
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.choice import NOT_CHOICE_COLUMNS, choose_candidates
from golden_distill.flows.tasks.frame_ref import FrameRef
from golden_distill.flows.tasks.grow import Growth, published_tenant_frame
from golden_distill.flows.tasks.jobs import RedactResult
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
    #: the new representatives (case_id, cluster_id) as first sent to redaction: what the
    #: refusal accounting compares the published cases with (None: no round ran yet)
    first_choice: pl.DataFrame | None = None
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
    parent_version: str | None = None  # the version grown (None: built from sources alone)
    carried: pl.DataFrame | None = None  # CARRIED_SCHEMA: kept previous representatives
    carried_clusters: pl.DataFrame | None = None  # their cluster rows (+ new members attached)
    last_seen: pl.DataFrame | None = None  # cluster_id -> newest member's recorded_at
    growth: Growth | None = None  # incremental runs: what the quotas over the grown set need
    #: case_id, published (pseudonymised) tenant id of redacted cases (runs from sources)
    published_tenants: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"case_id": pl.String, "published": pl.String})
    )
    #: the candidates' statuses after the last full choice (case_id, status); None: the
    #: select step's (``decisions``) stand. What the version's decisions table says
    final_status: pl.DataFrame | None = None
    #: a grown set: the parent's cases it lets go (case_id, reason)
    left: pl.DataFrame | None = None

    def frames_present(self) -> bool:
        """False when a frame the select task wrote is gone (a cleaned work folder): a cached
        selection is then recomputed."""
        refs = (self.decisions, self.clusters, self.quota_rows)
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
        if self.first_choice is None:  # this round redacted the first choice
            self.first_choice = self.representatives.select("case_id", "cluster_id")
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
        step = after_round(refused, learned, self.growth is not None, self.quota_rows is not None)
        if step is Next.AGAIN:
            self._choose_again(config)
        elif step is Next.FULL:
            self._choose(config)
        else:
            self._published_tenant_shares()
        return step is not Next.SHARES

    def refusal_counts(self, published_ids: set[str]) -> dict[str, Any]:
        """What redaction's refusals did (filters/refusal_accounting.py): selected, refused,
        replaced, lost (and clusters lost), admitted, published; over the new cases (carried
        cases are not redacted again)."""
        first = self.first_choice
        if first is None:
            first = self.representatives.select("case_id", "cluster_id")
        published = self.representatives.filter(
            pl.col("case_id").is_in(sorted(published_ids))
        ).select("case_id", "cluster_id")
        return refusal_accounting(first, published, self.excluded)

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
        hashes = []
        if self.clusters is not None and review.rejected_hashes:
            hashes.append(self.clusters.read(["case_id", "exact_hash"]))
        if self.growth is not None:
            hashes.append(self.growth.clusters)
        ids = review_left_out(review.rejected_ids, review.rejected_hashes, hashes)
        if self.growth is not None:  # a carried case a reviewer rejected leaves the set too
            growth = self.growth
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
        self.final_status = choice.chosen.decisions.select("case_id", "status")
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
        self.final_status = grown_statuses(
            self.candidate_ids(),
            reps.get_column("case_id"),
            quotas.kept_new,
            quotas.cut_new_ids,
            self.rejected,
        )
        self.left = carried_left(
            growth.carried_rows.get_column("case_id"),
            self.carried.get_column("case_id"),
            quotas.left,
            growth.aged_out_ids,
        )
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
