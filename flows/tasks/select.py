"""The global step: quotas over every shard's decisions, then clustering of the kept cases.

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
    """What quotas kept, the clusters among them, and the current representatives."""

    kept: pl.Series  # case ids the quotas keep
    clusters: pl.DataFrame | None  # the cluster table (None: dedup off)
    representatives: pl.DataFrame  # case_id, cluster_id, cluster_size
    excluded: set[str] = field(default_factory=set)  # refused by redaction
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def selected_count(self) -> int:
        return self.representatives.height

    def exclude(self, case_ids: set[str], config: PipelineConfig) -> None:
        """Drop cases redaction refused; the next member of each cluster takes their place."""
        self.excluded |= case_ids
        self.representatives = global_steps.representatives(
            self.clusters, self.kept, self.excluded, config
        )


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
    """Apply quotas to the union of shard candidates, then cluster and pick representatives.

    Cached under ``cache_key`` (see ``selection_cache_key``): a rerun over unchanged shards
    skips the global dedup too."""
    try:
        decisions = global_steps.load_decisions(results)
        kept, quota_stats = global_steps.apply_quotas(decisions, config)
    except Exception as exc:
        raise StageError("select", describe(exc)) from None
    try:
        signatures = global_steps.load_signatures(results, kept)
        clusters, dedup_stats = global_steps.deduplicate(signatures, config)
        reps = global_steps.representatives(clusters, kept, set(), config)
    except Exception as exc:
        raise StageError("dedup", describe(exc)) from None
    dedup_stats["removed_by_dedup"] = int(kept.len()) - reps.height
    return Selection(
        kept=kept, clusters=clusters, representatives=reps, stats={**quota_stats, **dedup_stats}
    )
