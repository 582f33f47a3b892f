"""The global step: quotas over every shard's candidates, then dedup over their signatures.

Only small columns travel here (ids, tenant, funnels, score, trajectory signature) and the dedup
signatures; whole cases stay in the shard files until publish gathers the chosen ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl
from prefect import task

from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.jobs import ShardResult


@dataclass
class Selection:
    """What to publish: representative case ids and each one's cluster (id, size, members)."""

    representatives: pl.DataFrame  # case_id, cluster_id, cluster_size
    clusters: pl.DataFrame | None  # case_id, cluster_id, is_representative (provenance)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def selected_count(self) -> int:
        return self.representatives.height


@task(name="select-and-dedup")
def select_cases(results: list[ShardResult], config: PipelineConfig) -> Selection:
    """Apply quotas to the union of shard candidates, then cluster and keep representatives."""
    try:
        small = global_steps.load_decisions(results)
    except Exception as exc:
        raise StageError("select", describe(exc)) from exc
    try:
        kept, quota_stats = global_steps.apply_quotas(small, config)
    except Exception as exc:
        raise StageError("select", describe(exc)) from exc
    try:
        signatures = global_steps.load_signatures(results, kept)
        representatives, clusters, dedup_stats = global_steps.deduplicate(signatures, config)
    except Exception as exc:
        raise StageError("dedup", describe(exc)) from exc
    return Selection(
        representatives=representatives,
        clusters=clusters,
        stats={**quota_stats, **dedup_stats},
    )
