"""Gather the chosen cases from the shard files, render the report, publish one version.

The only task that writes to the golden store, so it retries with backoff (a flaky S3 endpoint);
publishing is atomic and idempotent on the store's side, so a retry never leaves half a version.

Visibility is the last step that can fail a run: everything after the version became visible
(the artifacts with the report link, progress events, work-folder pruning) is best effort
(``best_effort``): a failure there is a warning in the log and the run succeeds with its
version, so a visible version is never a failed run and a failed run is never visible.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from golden_distill.datasets.sources.uris import display_uri
from golden_distill.filters.dedup.report import mark_published
from golden_distill.filters.review import log_digest
from golden_distill.filters.splits import GATED, assign_splits, belongs_in, gate_unconfirmed
from golden_distill.flows.caching import (
    pipeline_version,
    shard_config_sha256,
    version_inputs_sha256,
)
from golden_distill.flows.config import config_sha256
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.report import counts_rows, render_report
from golden_distill.flows.report.artifact import artifact_key, summary_markdown
from golden_distill.flows.tasks import earlier_versions, global_steps
from golden_distill.flows.tasks.coverage_step import run_coverage_gap
from golden_distill.flows.tasks.decisions_step import write_decisions_file
from golden_distill.flows.tasks.jobs import RedactResult, ShardResult
from golden_distill.flows.tasks.parent import carried_rows
from golden_distill.flows.tasks.run_stats import (
    change_against,
    merge_redaction_stats,
    merge_shard_stats,
)
from golden_distill.flows.tasks.selection_result import Selection
from golden_distill.flows.tasks.strength_step import version_strength
from golden_distill.redaction.inventory import new_paths


@dataclass(frozen=True)
class PublishOutcome:
    version: str
    report_path: str
    stats: dict[str, Any]
    reused: bool = False  # nothing changed: the latest version is this run's result
    why: str | None = None  # why the latest version stands (when reused)


@dataclass(frozen=True)
class PublishJob:
    """Everything the publish task needs from the flow (one argument, not nine)."""

    resolved: ResolvedRun
    results: list[ShardResult]
    redacted: list[RedactResult]
    selection: Selection
    timings: dict[str, float]
    key_id: str | None
    cached: tuple[int, int] = (0, 0)  # shard tasks, redact tasks taken from the cache
    inputs: str | None = None  # see inputs_sha256
    run_key: str | None = None  # see flows/run_key.py
    artifacts: bool = True  # Prefect artifacts (off in the local mode: no Prefect API)


def build_stats(job: PublishJob, published: dict[str, Any], case_ids: set[str]) -> dict[str, Any]:
    resolved, selection = job.resolved, job.selection
    parent, parent_ids = earlier_versions.parent_case_ids(resolved)
    stats = merge_shard_stats(job.results)
    stats.update(merge_redaction_stats(job.redacted))
    stats.update(selection.stats)
    stats.update(published)
    since, until = resolved.window
    stats.update(
        set_name=resolved.set_name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        config_sha256=config_sha256(resolved.config),
        shard_config_sha256=shard_config_sha256(resolved.config),
        pipeline_version=pipeline_version(),
        shards=len(job.results),
        shards_cached=job.cached[0],
        redact_tasks=len(job.redacted),
        redact_tasks_cached=job.cached[1],
        redaction_refusals=selection.refusal_counts(case_ids),
        since=since,
        until=until,
        change=change_against(parent, parent_ids, case_ids),
        stage_seconds={k: round(v, 3) for k, v in job.timings.items()},
        inputs_sha256=job.inputs,
        run_key=job.run_key,
        redaction_weakened=resolved.config.redaction.unsafe_allow_weakened,
    )
    if stats.get("largest_clusters"):  # name the member published, not the first choice
        stats["largest_clusters"] = mark_published(
            stats["largest_clusters"], case_ids, selection.excluded
        )
    stats["field_inventory_new"] = new_paths(
        stats.get("field_inventory") or {},
        earlier_versions.parent_field_inventory(resolved) if parent is not None else None,
    )
    return stats


def _run_publish(job: PublishJob) -> PublishOutcome:
    resolved = job.resolved
    inputs = job.inputs
    same = None if resolved.params.force else earlier_versions.latest_made_from(resolved, inputs)
    if same is not None:  # nothing changed since the latest version: it is this run's result
        version, stats = same
        report_path = earlier_versions.version_location(resolved, version)
        if job.artifacts:
            best_effort(
                "report artifacts", _artifacts, resolved, version, report_path,
                {**stats, "shards_cached": job.cached[0]},
            )  # fmt: skip
        return PublishOutcome(
            version=version,
            report_path=report_path,
            stats=stats,
            reused=True,
            why=SAME_INPUTS,
        )
    parts_dir = resolved.work.local_state() / "publish" / uuid.uuid4().hex
    try:
        return _publish_parts(job, parts_dir)
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)


def _publish_parts(job: PublishJob, parts_dir: Path) -> PublishOutcome:
    resolved, selection = job.resolved, job.selection
    started = time.perf_counter()
    selection.settle(resolved.config)  # statuses and counts after the redaction rounds
    carried = (
        carried_rows(resolved, selection.parent_version, selection.carried)
        if selection.parent_version and selection.carried is not None
        else ()
    )
    previous = earlier_versions.parent_splits(resolved)
    require = resolved.config.curation.review.require_confirmation
    try:
        new = with_splits(selection.published_columns(), resolved, previous)
        held = held_ids(
            new,
            None if selection.carried is None else selection.carried.get_column("case_id"),
            previous,
            resolved,
            selection.confirmed,
        )
        parts, published, case_ids = global_steps.write_publish_parts(
            [r.redacted_path for r in job.redacted],
            new,
            parts_dir,
            carried,
            resolved.config.curation.splits,
            marks=selection.review_marks,
            work=resolved.work,
            gate=lambda frame: gate_unconfirmed(belongs_in(frame, previous), require),
        )
    except Exception as exc:
        raise StageError("publish", f"gathering selected cases: {describe(exc)}") from None
    if not case_ids:  # every chosen case refused or rejected: never an empty version
        raise StageError(
            "publish", "no case left to publish (redaction refused or review rejected every "
            "selected case); nothing was published",
        )  # fmt: skip
    try:
        stats = build_stats(job, published, case_ids)
        stats["held_by_confirmation_gate"] = len(held & case_ids)
        stats.update(earlier_versions.drift_against_pinned(resolved, parts))
        stats["stage_seconds"]["gather"] = round(time.perf_counter() - started, 3)
        mark = time.perf_counter()
        stats["coverage_gap"] = run_coverage_gap(
            [r.signatures_path for r in job.results], parts, resolved.config, resolved.work
        )
        stats["stage_seconds"]["coverage_gap"] = round(time.perf_counter() - mark, 3)
        config = resolved.config
        measured = version_strength(
            parts, case_ids, config.publish.strength, config.ingest.volatile_keys
        )
        if measured is not None:
            stats.update(measured)
            stats["stage_seconds"]["strength"] = measured["strength"]["seconds"]
    except Exception as exc:
        raise StageError("report", describe(exc)) from None
    try:
        mark = time.perf_counter()
        decisions = write_decisions_file(job, case_ids, parts_dir, held)
        stats["stage_seconds"]["decisions"] = round(time.perf_counter() - mark, 3)
    except Exception as exc:
        raise StageError("publish", f"the decisions table: {describe(exc)}") from None
    try:
        version, report_path, same_as = global_steps.publish(
            resolved, parts, selection, stats, render_report, job.key_id, parts_dir, decisions
        )
    except StageError:
        raise
    except Exception as exc:
        raise StageError("publish", describe(exc)) from None
    stats["version"] = version  # visible from here: nothing below may fail the run
    if job.artifacts:
        best_effort("report artifacts", _artifacts, resolved, version, report_path, stats)
    if same_as is not None:
        why = SAME_CONTENT.format(version=same_as)
        return PublishOutcome(version, report_path, stats, reused=True, why=why)
    return PublishOutcome(version=version, report_path=report_path, stats=stats)


#: Why the latest version stands, as `golden run` prints it.
SAME_INPUTS = (
    "same inputs: shard contents, selection, config, pseudonym key and code are unchanged "
    "since it was published"
)
SAME_CONTENT = (
    "same content hash: this run selected and redacted exactly the cases of {version} "
    "(a config change that selects the same cases changes nothing)"
)


def with_splits(
    published: pl.DataFrame, resolved: ResolvedRun, previous: dict[str, str] | None = None
) -> pl.DataFrame:
    """The published cases with their split: the one the parent version says they belong in
    for cases it had, else by cluster, then the confirmation gate (filters/splits.py);
    ``_belongs_in`` keeps the split before the gate."""
    if previous is None:
        previous = earlier_versions.parent_splits(resolved)
    curation = resolved.config.curation
    split = assign_splits(published, curation.splits, previous)
    return gate_unconfirmed(published.with_columns(split), curation.review.require_confirmation)


def held_ids(
    new: pl.DataFrame,
    carried: pl.Series | None,
    previous: dict[str, str],
    resolved: ResolvedRun,
    confirmed: set[str],
) -> set[str]:
    """The published cases the confirmation gate holds out of the split they belong in: new
    ones (``new``, ``with_splits``' frame) and carried ones (the parent's split for them)."""
    held = set(new.filter(pl.col("_belongs_in") != pl.col("split")).get_column("case_id").to_list())
    if carried is not None and resolved.config.curation.review.require_confirmation:
        held |= {c for c in carried.to_list() if previous.get(c) == GATED and c not in confirmed}
    return held


def best_effort(what: str, action: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a step that comes after the version became visible; a failure is a warning only."""
    try:
        return action(*args, **kwargs)
    except Exception as exc:
        try:
            logger: Any = get_run_logger()
        except Exception:  # outside a flow or task run
            logger = logging.getLogger(__name__)
        logger.warning("%s failed after the version was published: %s", what, describe(exc))
        return None


def _artifacts(
    resolved: ResolvedRun, version: str, report_path: str, stats: dict[str, Any]
) -> None:
    """The run summary as markdown (headline figures and changes; a browser shows it in the
    UI) and the counts table, keyed per store and set (no personal data)."""
    store, name = resolved.store_url, resolved.set_name
    create_markdown_artifact(
        key=artifact_key(store, name),
        markdown=summary_markdown(name, version, display_uri(store), report_path, stats),
        description=f"Run summary of {name}@{version}",
    )
    create_table_artifact(
        key=artifact_key(store, name, "counts"),
        table=counts_rows(stats),
        description=f"Counts of {name}@{version}",
    )


@task(name="publish-version", cache_policy=NO_CACHE, persist_result=False)
def publish_set(job: PublishJob) -> PublishOutcome:
    """Publish the selected cases as a new immutable version; return its id and report path.

    ``job.run_key`` (see flows/run_key.py) is recorded in the manifest stats so `golden run`
    can answer an unchanged rerun without starting Prefect. ``job.inputs`` fingerprints
    everything the version is made of (see ``inputs_sha256``); when the latest version was made
    from the same inputs, it is returned instead (unless force).
    """
    return _run_publish(job)


def inputs_sha256(
    resolved: ResolvedRun,
    select_key: str | None,
    redacted: list[RedactResult],
    key_id: str | None,
) -> str | None:
    """A version's content is a function of these: equal fingerprints, equal versions."""
    if select_key is None:
        return None
    keys = [r.cache_key for r in redacted]
    review = log_digest(global_steps.review_log(resolved))  # a new review decision counts
    return version_inputs_sha256(
        resolved.config, resolved.set_name, key_id, keys, head=select_key, extra=review
    )
