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

from golden_distill.filters.review import log_digest
from golden_distill.filters.splits import assign_splits
from golden_distill.flows.caching import (
    pipeline_version,
    shard_config_sha256,
    version_inputs_sha256,
)
from golden_distill.flows.config import config_sha256
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.report import counts_rows, render_report
from golden_distill.flows.tasks import earlier_versions, global_steps
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
    try:
        parts, published, case_ids = global_steps.write_publish_parts(
            [r.redacted_path for r in job.redacted],
            with_splits(selection.published_columns(), resolved),
            parts_dir,
            carried,
            resolved.config.curation.splits,
            marks=selection.review_marks,
            work=resolved.work,
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
        stats.update(earlier_versions.drift_against_pinned(resolved, parts, selection.paths))
        stats["stage_seconds"]["gather"] = round(time.perf_counter() - started, 3)
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
        version, report_path, same_as = global_steps.publish(
            resolved, parts, selection, stats, render_report, job.key_id, parts_dir
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


def with_splits(published: pl.DataFrame, resolved: ResolvedRun) -> pl.DataFrame:
    """The published cases with their split: the parent version's for cases it had, else by
    cluster (filters/splits.py)."""
    previous = earlier_versions.parent_splits(resolved)
    curation = resolved.config.curation
    split = assign_splits(published, curation.splits, previous)
    out = published.with_columns(split)
    if curation.review.require_confirmation and "_confirmed" in out.columns:
        # only cases a person confirmed may stand in the regression split
        out = out.with_columns(
            split=pl.when((pl.col("split") == "regression") & ~pl.col("_confirmed"))
            .then(pl.lit("dev"))
            .otherwise(pl.col("split"))
        )
    return out


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
    """A markdown artifact linking the report, and the counts table (no personal data)."""
    key = f"{resolved.set_name}-report".lower().replace("_", "-").replace(".", "-")
    create_markdown_artifact(
        key=key[:64],
        markdown=(
            f"# Golden set `{resolved.set_name}` version `{version}`\n\n"
            f"* published cases: **{stats.get('published', 0):,}** "
            f"(from {stats.get('records_read', 0):,} records read)\n"
            f"* shards: {stats.get('shards', 0)} ({stats.get('shards_cached', 0)} from cache)\n"
            f"* report: [{report_path}]({_link(report_path)})\n"
        ),
        description=f"Run report of {resolved.set_name}@{version}",
    )
    create_table_artifact(
        key=f"{key[:55]}-counts",
        table=counts_rows(stats),
        description=f"Counts of {resolved.set_name}@{version}",
    )


def _link(path: str) -> str:
    return path if "://" in path else f"file://{path}"


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
