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

import time
from pathlib import Path
from typing import Any

import polars as pl
from prefect import flow, get_run_logger
from prefect.futures import as_completed

from golden_distill.flows import progress
from golden_distill.flows.caching import pipeline_version, shard_cache_key, shard_config_sha256
from golden_distill.flows.errors import StageError, describe, retry_if_transient, set_error_log
from golden_distill.flows.params import DistillParams, ResolvedRun
from golden_distill.flows.run_key import run_key
from golden_distill.flows.runners import ShardRunners, likely_cached
from golden_distill.flows.source_files import Shard, discover_shards
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.jobs import RedactJob, RedactResult, ShardJob, ShardResult
from golden_distill.flows.tasks.publish import best_effort, inputs_sha256, publish_set
from golden_distill.flows.tasks.redact import redact_cache_key, redact_shard
from golden_distill.flows.tasks.select import Selection, select_cases, selection_cache_key
from golden_distill.flows.tasks.shard import outputs_present, process_shard
from golden_distill.flows.workdir import prune


def _validate(params: DistillParams) -> ResolvedRun:
    try:
        return params.resolve()
    except Exception as exc:
        raise StageError("validate", describe(exc)) from None


def _key_id(resolved: ResolvedRun) -> str:
    """The pseudonym key's id, resolved before any work (a missing key fails in `validate`);
    part of the redaction cache key: a new key must re-pseudonymise."""
    from golden_distill.redaction.keys import resolve_key

    red = resolved.config.redaction
    try:
        return resolve_key(
            secret_block=red.key_secret_block, local_key_file=red.local_key_file
        ).key.key_id
    except Exception as exc:
        raise StageError("validate", describe(exc)) from None


def plan_shards(resolved: ResolvedRun, shards: list[Shard]) -> list[ShardJob]:
    """One job per shard, with its cache key and content-addressed output folder."""
    params, config = resolved.params, resolved.config
    window = (
        params.since.isoformat() if params.since else None,
        params.until.isoformat() if params.until else None,
    )
    config_sha = shard_config_sha256(config)
    version = pipeline_version()
    jobs = []
    for index, shard in enumerate(shards):
        key = None
        if shard.fingerprint and config.run.cache_shards:
            key = shard_cache_key(
                fingerprint=shard.fingerprint,
                config_sha256=config_sha,
                version=version,
                window=window,
            )
        # A cacheable shard's folder is named by its key (content-addressed, reused by reruns);
        # an uncacheable one gets a fresh folder per run.
        folder = key[:32] if key else f"nocache-{time.time_ns()}-{index}"
        jobs.append(
            ShardJob(
                index=index,
                shard=shard,
                config=config,
                out_dir=str(resolved.work_dir / "shards" / folder),
                cache_key=key,
                pipeline_version=version,
                source_format=params.source_format,
                since=window[0],
                until=window[1],
            )
        )
    return jobs


def _with_retries(task: Any, resolved: ResolvedRun, refresh: bool = False) -> Any:
    """Cached per-shard task options: results under a Path, retries with backoff on I/O errors."""
    run = resolved.config.run
    return task.with_options(
        result_storage=run.results_dir(),  # a Path: a str would be read as a block slug
        retries=run.storage_retries,
        retry_delay_seconds=[
            run.retry_backoff_seconds * 2**i for i in range(max(1, run.storage_retries))
        ],
        retry_condition_fn=retry_if_transient,
        refresh_cache=refresh or None,
    )


def _map(
    runners: ShardRunners,
    resolved: ResolvedRun,
    task: Any,
    jobs: list[Any],
    event: str,
    stage: str,
) -> tuple[dict[int, Any], int]:
    """Submit ``task`` for every job, report each as it ends; results by index, cache hits."""
    logger = get_run_logger()
    runner = runners.pick(
        likely_cached([job.cache_key for job in jobs], resolved.config.run.results_dir())
    )
    results: dict[int, Any] = {}
    cached = 0
    counted = 0
    submitted = _with_retries(task, resolved)
    futures = [runner.submit(submitted, {"job": job}) for job in jobs]
    for future in as_completed(futures):
        result = _unwrap(future, stage)
        hit = _is_cache_hit(future)
        cached += hit
        results[result.index] = result
        counted += int(getattr(result, "candidates", 0) or result.stats.get("redacted", 0))
        progress.emit(
            event, done=len(results), total=len(jobs), selected=counted, cached=hit,
            shard=result.label,
        )  # fmt: skip
        logger.info("%s %d/%d%s", event, len(results), len(jobs), " (cached)" if hit else "")
    # A cached result whose files were removed (work dir cleaned) is recomputed.
    by_index = {job.index: job for job in jobs}
    stale = [by_index[i] for i, r in results.items() if not outputs_present(r)]
    if stale:
        logger.info("%d cached result(s) lost their files: recomputing", len(stale))
        fresh = _with_retries(task, resolved, refresh=True)
        for future in [runner.submit(fresh, {"job": job}) for job in stale]:
            result = _unwrap(future, stage)
            results[result.index] = result
            cached -= 1
            progress.emit("recomputed", stage=stage, shard=result.label)
    return results, cached


def _is_cache_hit(future: Any) -> bool:
    state = getattr(future, "state", None)
    return bool(state is not None and state.name == "Cached")


def _unwrap(future: Any, stage: str) -> Any:
    try:
        return future.result()
    except StageError:
        raise
    except Exception as exc:
        raise StageError(stage, describe(exc)) from None


def _redact_jobs(
    resolved: ResolvedRun,
    results: list[ShardResult],
    ids: pl.Series,
    done: set[str],
    key_id: str | None,
    version: str,
    round_no: int,
) -> list[RedactJob]:
    """One redact job per shard holding chosen cases not redacted yet."""
    wanted = set(ids.to_list()) - done
    if not wanted:
        return []
    jobs = []
    for result in results:
        shard_ids = pl.read_parquet(result.candidates_path, columns=["case_id"]).get_column(
            "case_id"
        )
        mine = tuple(sorted(set(shard_ids.to_list()) & wanted))
        if not mine:
            continue
        key = redact_cache_key(result.cache_key, mine, key_id)
        folder = f"redacted-{key[:16]}" if key else f"redacted-{time.time_ns()}-{round_no}"
        jobs.append(
            RedactJob(
                index=result.index * 100 + round_no,
                label=result.label,
                candidates_path=result.candidates_path,
                case_ids=mine,
                config=resolved.config,
                out_dir=str(Path(result.candidates_path).parent / folder),
                cache_key=key,
                pipeline_version=version,
            )
        )
    return jobs


#: Redaction rounds: a refused representative is replaced by the next member of its cluster,
#: which is redacted in the next round. Refusals are rare; more rounds than this means a
#: systematic problem, and the remaining clusters are published without a replacement.
MAX_REDACTION_ROUNDS = 4


def _redact_selection(
    runner: ShardRunners,
    resolved: ResolvedRun,
    results: list[ShardResult],
    selection: Selection,
    key_id: str | None,
) -> tuple[list[RedactResult], int]:
    logger = get_run_logger()
    version = pipeline_version()
    redacted: list[RedactResult] = []
    done: set[str] = set()
    cached = 0
    for round_no in range(MAX_REDACTION_ROUNDS):
        ids = selection.representatives.get_column("case_id")
        jobs = _redact_jobs(resolved, results, ids, done, key_id, version, round_no)
        if not jobs:
            break
        for job in jobs:
            done.update(job.case_ids)
        found, hits = _map(runner, resolved, redact_shard, jobs, "redact_done", "redact")
        cached += hits
        redacted.extend(found[i] for i in sorted(found))
        refused = {cid for r in found.values() for cid in r.quarantined}
        if not refused:
            break
        logger.info("redaction refused %d case(s): choosing replacements", len(refused))
        selection.exclude(refused, resolved.config)
    return redacted, cached


@flow(name="distill", validate_parameters=True)
def distill(params: DistillParams) -> str:
    """Distil the recordings named by ``params`` into a new version of a golden set.

    Returns the published version id.
    """
    logger = get_run_logger()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    resolved = _validate(params)
    set_error_log(resolved.work_dir / "errors.log")
    key_id = _key_id(resolved)
    run = resolved.config.run
    timings["validate"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        shards = discover_shards(resolved.sources, memo=resolved.work_dir / "fingerprints.json")
    except Exception as exc:
        raise StageError("discover", describe(exc)) from None
    jobs = plan_shards(resolved, shards)
    key = run_key(resolved, [job.cache_key for job in jobs], key_id)
    timings["discover"] = time.perf_counter() - t0
    logger.info("%d shard(s) to process", len(jobs))
    progress.emit("shards_planned", total=len(jobs))

    with ShardRunners(run) as runner:
        t0 = time.perf_counter()
        found, cached = _map(runner, resolved, process_shard, jobs, "shard_done", "shard")
        results = [found[i] for i in sorted(found)]
        timings["shards"] = time.perf_counter() - t0
        logger.info("%d of %d shard(s) reused from cache", cached, len(jobs))
        if not run.dask_address:
            runner.release()  # free the workers' memory for the global step

        t0 = time.perf_counter()
        select_key = selection_cache_key([r.cache_key for r in results], resolved.config)
        selection = select_cases.with_options(result_storage=run.results_dir())(
            results, resolved.config, cache_key=select_key
        )
        selection.apply_review(global_steps.review_decisions(resolved), resolved.config)
        timings["select+dedup"] = time.perf_counter() - t0
        progress.emit("selected", selected=selection.selected_count)

        t0 = time.perf_counter()
        redacted, redact_cached = _redact_selection(runner, resolved, results, selection, key_id)
        timings["redact"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    publish = publish_set.with_options(
        retry_condition_fn=retry_if_transient,
        retries=run.storage_retries,
        retry_delay_seconds=[
            run.retry_backoff_seconds * 2**i for i in range(max(1, run.storage_retries))
        ],
    )
    inputs = inputs_sha256(resolved, select_key, redacted, key_id)
    outcome = publish(
        resolved,
        results,
        redacted,
        selection,
        timings,
        key_id,
        (cached, redact_cached),
        inputs,
        run_key=key,
    )
    timings["publish"] = time.perf_counter() - t0
    # The version is visible now: what follows is best effort and never fails the run.
    best_effort("reporting", _after_publish, resolved, outcome)
    if run.prune_work_dir:
        best_effort("pruning the work folder", _prune_work, resolved, jobs, redacted, select_key)
    return outcome.version


def _after_publish(resolved: ResolvedRun, outcome: Any) -> None:
    progress.emit(
        "published",
        version=outcome.version,
        report=outcome.report_path,
        reused=outcome.reused,
        why=outcome.why,
    )
    logger = get_run_logger()
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
) -> None:
    run = resolved.config.run
    keep_dirs = {Path(job.out_dir).name for job in jobs}
    keep_dirs |= {Path(r.redacted_path).parent.name for r in redacted}
    keep_keys = {job.cache_key for job in jobs if job.cache_key}
    keep_keys |= {select_key} if select_key else set()
    keep_keys |= {r.cache_key for r in redacted if r.cache_key}
    removed = prune(resolved.work_dir / "shards", run.results_dir(), keep_dirs, keep_keys)
    get_run_logger().info("work dir: removed %d stale folder(s)/result(s)", removed)


def run_distill(params: DistillParams) -> str:
    """Run the flow in this process (the `golden run` and `make demo` entry)."""
    return distill(params)
