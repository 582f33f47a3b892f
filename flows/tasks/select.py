"""The global step: clustering of every shard's candidates, then quotas over the representatives
(``filters.selection``, the same code `golden preview` runs).

Only small columns travel here (ids, tenant, funnels, score, trajectory signature) and the dedup
signatures; whole cases stay in the shard files until the redact task reads the chosen ones.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from prefect import task

from golden_distill.flows.caching import pipeline_version
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.jobs import ShardResult


@dataclass
class Selection:
    """Every case's decision, the clusters among the candidates, and the representatives."""

    decisions: pl.DataFrame  # one small row per case, with status (see filters.selection)
    clusters: pl.DataFrame | None  # the cluster table (None: dedup off)
    representatives: pl.DataFrame  # case_id, cluster_id, cluster_size, priority
    excluded: set[str] = field(default_factory=set)  # refused by redaction
    rejected: set[str] = field(default_factory=set)  # rejected in review (filters/review.py)
    confirmed: set[str] = field(default_factory=set)  # confirmed in review: trust human
    corrections: dict[str, dict[str, Any]] = field(default_factory=dict)  # corrected expected
    stats: dict[str, Any] = field(default_factory=dict)
    #: every candidate's tool path (case_id, path_key, trajectory), for the coverage gap
    paths: pl.DataFrame | None = None

    def published_columns(self) -> pl.DataFrame:
        """The representatives with the pipeline columns the global decisions give them
        (funnels, funnel_reasons, value_score: the batch-wide pass, not the shard's)."""
        decided = self.decisions.filter(pl.col("status") == "selected").unique(
            "case_id", keep="first"
        )
        return (
            self.representatives.drop("priority")
            .join(
                decided.select("case_id", "funnels", "funnel_reasons", "value_score"),
                on="case_id",
                how="left",
            )
            .with_columns(
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
        )

    @property
    def selected_count(self) -> int:
        return self.representatives.height

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
        candidates = set(self.decisions.filter(pl.col("candidate"))["case_id"].to_list())
        self.rejected |= ids & candidates
        if self.rejected:
            self._choose(config)

    def _choose(self, config: PipelineConfig) -> None:
        chosen = global_steps.choose(
            self.decisions, self.clusters, config, self.excluded, self.rejected
        )
        self.decisions, self.representatives = chosen.decisions, chosen.representatives
        self.stats.update(global_steps.selection_counts(chosen, config))


def selection_cache_key(shard_keys: list[str | None], config: PipelineConfig) -> str | None:
    """Same shard results + same funnel/dedup config + same code = the same selection."""
    if not shard_keys or any(k is None for k in shard_keys):
        return None
    digest = hashlib.sha256(pipeline_version().encode())
    digest.update(config.model_dump_json(include={"funnels", "dedup"}).encode())
    for key in sorted(k for k in shard_keys if k):
        digest.update(key.encode())
    return digest.hexdigest()


def _select_cache_key(context: object, parameters: dict[str, Any]) -> str | None:
    return parameters.get("cache_key")


@task(name="select-and-dedup", cache_key_fn=_select_cache_key, persist_result=True)
def select_cases(
    results: list[ShardResult], config: PipelineConfig, cache_key: str | None = None
) -> Selection:
    """Cluster the union of shard candidates, pick representatives, then apply the quotas.

    Cached under ``cache_key`` (see ``selection_cache_key``): a rerun over unchanged shards
    skips the global dedup too."""
    try:
        decisions = global_steps.batch_wide(global_steps.load_decisions(results), results, config)
        candidates = decisions.filter(pl.col("candidate")).get_column("case_id")
        signatures = global_steps.with_decided_scores(
            global_steps.load_signatures(results, candidates), decisions
        )
        clusters, dedup_stats = global_steps.deduplicate(signatures, config)
    except Exception as exc:
        raise StageError("dedup", describe(exc)) from None
    try:
        chosen = global_steps.choose(decisions, clusters, config, set())
        stats = {**dedup_stats, **global_steps.selection_counts(chosen, config)}
    except Exception as exc:
        raise StageError("select", describe(exc)) from None
    return Selection(
        decisions=chosen.decisions,
        clusters=clusters,
        representatives=chosen.representatives,
        stats=stats,
        paths=signatures.select("case_id", "path_key", "trajectory"),
    )
