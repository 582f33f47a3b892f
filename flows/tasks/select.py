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
from dataclasses import replace
from typing import Any

import polars as pl
from prefect import task

from golden_distill.flows.caching import pipeline_version
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks import global_steps, input_checks
from golden_distill.flows.tasks.choice import (
    CHOICE_CLUSTER_COLUMNS,
    SplitDecisions,
    choose_candidates,
    night_decisions,
)
from golden_distill.flows.tasks.dedup_step import deduplicate_candidates
from golden_distill.flows.tasks.frame_ref import FrameRef
from golden_distill.flows.tasks.grow import grow, newest_per_cluster
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.tasks.parent import incremental_parent, load_parent
from golden_distill.flows.tasks.selection_result import Selection
from golden_distill.flows.work_folder import WorkFolder


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

    Stops the run first when no case was read or two different records share one case id,
    and last when nothing is selected (``input_checks``): no empty version is published.

    Cached under ``cache_key`` (see ``selection_cache_key``): a rerun over unchanged shards
    skips the global dedup too."""
    config = resolved.config
    work = resolved.work
    input_checks.check_input(results)  # no case read at all: stop, publish nothing
    try:
        input_checks.check_case_ids(results, work)
    except StageError:
        raise
    except Exception as exc:
        raise StageError("select", f"checking case ids: {describe(exc)}") from None
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
            selection = _from_sources(results, config, split, work, folder)
        else:
            selection = _grown(results, config, decisions, parent, resolved)
    except StageError:
        raise
    except Exception as exc:
        raise StageError("dedup", describe(exc)) from None
    input_checks.check_selected(selection, results, resolved.window)  # an empty version: stop
    return selection


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
    dedup = deduplicate_candidates(results, candidates, active, config.dedup, work)
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
