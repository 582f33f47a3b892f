"""The nightly `distill` flow: recordings in, one published golden-set version out.

    validate params -> discover shards -> [per shard: read, window, funnels, signatures]
        -> select (global quotas) -> dedup (global clusters, one representative each)
        -> [per shard: redact the chosen cases; refused ones are replaced from their cluster]
        -> publish + report (or: nothing changed, the latest version stands)

Per-shard tasks are mapped over shards on the runner the config names (threads, a process pool
or Dask) and are cached (see caching.py); the global steps see only small columns and
signatures. Redaction, by far the slowest step, runs last so it only sees cases that will be
published.
Run it with `golden run` (local, no server to install) or as the `nightly` deployment
(prefect.yaml).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from prefect import flow

from golden_distill.flows import progress
from golden_distill.flows.engine import LocalEngine, PrefectEngine
from golden_distill.flows.errors import StageError, describe, set_error_log
from golden_distill.flows.flow_limits import flow_limits
from golden_distill.flows.params import DistillParams, ResolvedRun, takes_run_params
from golden_distill.flows.preflight import preflight, validate
from golden_distill.flows.redact_stage import redact_selection
from golden_distill.flows.set_guard import holding_set
from golden_distill.flows.tasks.earlier_versions import latest_version, version_location
from golden_distill.flows.tasks.global_steps import review_decisions
from golden_distill.flows.tasks.jobs import RedactResult, ShardJob
from golden_distill.flows.tasks.keys import prune_run_keys
from golden_distill.flows.tasks.publish import PublishJob, best_effort, inputs_sha256
from golden_distill.flows.tasks.select import parent_key, selection_cache_key, selection_folder
from golden_distill.flows.tasks.shard import process_shard
from golden_distill.flows.timing import StageClock
from golden_distill.flows.window import scheduled_start_time
from golden_distill.flows.workdir import prune

Engine = PrefectEngine | LocalEngine
#: Timeout and retries from the environment of the process defining the flow (flows/flow_limits.py).
LIMITS = flow_limits()


@flow(
    name="distill",
    validate_parameters=True,
    timeout_seconds=LIMITS.timeout_seconds,
    retries=LIMITS.retries,
    retry_delay_seconds=LIMITS.retry_delay_seconds,
)
@takes_run_params
def distill(**parameters: Any) -> str:
    """Distil the recordings of ``sources`` in ``[since, until)`` into a new version of a set.

    Flat parameters, one per field of ``DistillParams`` (flows/params.py, where each is
    documented; ``takes_run_params`` gives this function their signature), so a backfill sets
    one field: ``prefect deployment run distill/nightly -p since=2026-11-20 -p until=2026-11-23``.
    Without ``since``/``until`` a scheduled run reads from the set's watermark to its scheduled
    start (flows/window.py). Returns the published version id.
    """
    try:
        params = DistillParams.from_flow(parameters)
    except Exception as exc:
        raise StageError("validate", describe(exc)) from None
    return _distill(params)


def _distill(params: DistillParams, local: bool = False) -> str:
    """One run per set at a time: the set's lock is held from before the head and the
    watermark are read until the version is published (flows/set_guard.py)."""
    clock = StageClock()
    with holding_set(validate(params), "run") as head:
        return _distill_locked(params, clock, head, local)


def _distill_locked(params: DistillParams, clock: StageClock, head: str | None, local: bool) -> str:
    with clock.stage("validate+discover"):
        scheduled = None if local else scheduled_start_time()
        prepared = preflight(params, scheduled_start=scheduled, allow_prefect=not local)
        prepared = dataclasses.replace(
            prepared, resolved=dataclasses.replace(prepared.resolved, expected_head=(head,))
        )
    resolved = prepared.resolved
    set_error_log(resolved.work.local_state() / "errors.log")
    engine: Engine = LocalEngine(resolved) if local else PrefectEngine(resolved)
    logger = engine.logger
    run = resolved.config.run
    if prepared.empty_window:
        return _nothing_new(resolved, logger)
    jobs = prepared.jobs
    for missing in prepared.discovery.missing_partitions:
        logger.info("no partition %s in the window (no recordings that period)", missing)
    logger.info("%d shard(s) to process (window %s .. %s)", len(jobs), *resolved.window)
    progress.emit("shards_planned", total=len(jobs))

    with engine:
        with clock.stage("shards"):
            found, cached = engine.map(process_shard, jobs, "shard_done", "shard")
            results = [found[i] for i in sorted(found)]
        logger.info("%d of %d shard(s) reused from cache", cached, len(jobs))
        engine.release()

        with clock.stage("select+dedup"):
            select_key = selection_cache_key(
                [r.cache_key for r in results], resolved.config, parent_key(resolved)
            )
            selection = engine.select(results, select_key)
            selection.apply_review(review_decisions(resolved), resolved.config)
        progress.emit("selected", selected=selection.selected_count)

        with clock.stage("redact"):
            redacted, redact_cached, key_passes = redact_selection(
                engine, prepared, results, selection
            )

    with clock.stage("publish"):
        outcome = engine.publish(
            PublishJob(
                resolved=resolved,
                results=results,
                redacted=redacted,
                selection=selection,
                timings=clock.seconds,
                key_id=prepared.key_id,
                cached=(cached, redact_cached),
                inputs=inputs_sha256(resolved, select_key, redacted, prepared.key_id),
                run_key=prepared.run_key,
                artifacts=engine.artifacts,
            )
        )
    # The version is visible now: what follows is best effort and never fails the run.
    best_effort("reporting", _after_publish, resolved, outcome, logger)
    if run.prune_work_dir:
        best_effort(
            "pruning the work folder",
            _prune_work,
            resolved,
            jobs,
            redacted,
            select_key,
            key_passes,
            logger,
        )
    return outcome.version


def _after_publish(resolved: ResolvedRun, outcome: Any, logger: Any) -> None:
    progress.emit(
        "published",
        version=outcome.version,
        report=outcome.report_path,
        reused=outcome.reused,
        why=outcome.why,
        quarantined=(outcome.stats or {}).get("quarantined") or {},
        cases=(outcome.stats or {}).get("published"),
        refusals=(outcome.stats or {}).get("redaction_refusals"),
    )
    if outcome.reused:
        logger.info(
            "nothing changed since %s@%s: not republished", resolved.set_name, outcome.version
        )
    else:
        logger.info("published %s@%s", resolved.set_name, outcome.version)


def _prune_work(
    resolved: ResolvedRun,
    jobs: list[ShardJob],
    redacted: list[RedactResult],
    select_key: str | None,
    key_passes: set[str],
    logger: Any,
) -> None:
    run = resolved.config.run
    work = resolved.work
    keep_dirs = {work.name(job.out_dir) for job in jobs}
    keep_dirs |= {work.name(work.parent(r.redacted_path)) for r in redacted}
    keep_keys = {job.cache_key for job in jobs if job.cache_key}
    keep_keys |= {select_key} if select_key else set()
    keep_dirs |= {work.name(selection_folder(work, select_key))} if select_key else set()
    keep_keys |= {r.cache_key for r in redacted if r.cache_key}
    old = [r.superseded for r in redacted if r.superseded]  # first passes of collision redos
    keep_dirs |= {work.name(work.parent(path)) for _, path in old}
    keep_keys |= {key for key, _ in old if key}
    keep_keys |= key_passes
    removed = prune(work.join("shards"), run.results_location(), keep_dirs, keep_keys, work)
    removed += prune_run_keys(work, {r.run_keys_path for r in redacted if r.run_keys_path})
    logger.info("work dir: removed %d stale folder(s)/result(s)", removed)


def _nothing_new(resolved: ResolvedRun, logger: Any) -> str:
    """The window was already read (the watermark is at the scheduled start): the latest
    version stands."""
    version = latest_version(resolved)
    if version is None:
        raise StageError("discover", "empty window and no published version")
    logger.info("window already read up to %s: %s stands", resolved.until, version)
    report = version_location(resolved, version)
    why = f"the window up to {resolved.until} was already read: no new recordings"
    progress.emit("published", version=version, report=report, reused=True, why=why)
    return version


def run_distill(params: DistillParams, *, local: bool = False) -> str:
    """Run the flow in this process (the `golden run` and `make demo` entry); ``local``: the
    same steps without Prefect (flows/engine.py), the lighter mode for small runs by hand."""
    if local:
        return _distill(params, local=True)
    return distill(**params.flow_parameters())
