"""The nightly `distill` flow: recordings in, one published golden-set version out.

    validate params -> discover shards -> [per shard: read, funnels, redact, signatures]
                    -> select (global quotas) -> dedup (global clusters) -> publish + report

Per-shard tasks are mapped over shards on the runner the config names (threads, a process pool
or Dask) and are cached by shard content (see caching.py); the global steps see only small
columns and signatures, then gather the chosen rows from the shard files to publish them.
Run it with `golden run` (local, no server to install) or as the `nightly` deployment
(prefect.yaml).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.futures import as_completed

from golden_distill.flows import progress
from golden_distill.flows.caching import pipeline_version, shard_cache_key, shard_config_sha256
from golden_distill.flows.errors import StageError, describe, retry_if_transient
from golden_distill.flows.params import DistillParams, ResolvedRun
from golden_distill.flows.runners import is_process_based, make_shard_runner, workers_share_api
from golden_distill.flows.source_files import Shard, discover_shards
from golden_distill.flows.tasks.jobs import ShardJob, ShardResult
from golden_distill.flows.tasks.publish import publish_set
from golden_distill.flows.tasks.select import select_cases
from golden_distill.flows.tasks.shard import outputs_present, process_shard


def _validate(params: DistillParams) -> ResolvedRun:
    try:
        return params.resolve()
    except Exception as exc:
        raise StageError("validate", describe(exc)) from exc


def _key_id(resolved: ResolvedRun) -> str | None:
    """The pseudonym key's id (part of the cache key: a new key must re-pseudonymise)."""
    try:
        from golden_distill.redaction.keys import resolve_key
    except ImportError:  # redaction not installed: no key involved
        return None
    red = resolved.config.redaction
    try:
        return resolve_key(
            secret_block=getattr(red, "key_secret_block", None),
            local_key_file=getattr(red, "local_key_file", None),
        ).key.key_id
    except Exception as exc:
        raise StageError("validate", describe(exc)) from exc


def _plan(resolved: ResolvedRun, shards: list[Shard], key_id: str | None) -> list[ShardJob]:
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
                key_id=key_id,
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
                key_id=key_id,
                source_format=params.source_format,
                since=window[0],
                until=window[1],
            )
        )
    return jobs


def _shard_task(resolved: ResolvedRun, refresh: bool = False) -> Any:
    run = resolved.config.run
    return process_shard.with_options(
        result_storage=run.results_dir(),  # a Path: a str would be read as a block slug
        retries=run.storage_retries,
        retry_delay_seconds=[
            run.retry_backoff_seconds * 2**i for i in range(max(1, run.storage_retries))
        ],
        retry_condition_fn=retry_if_transient,
        refresh_cache=refresh or None,
    )


def _run_shards(resolved: ResolvedRun, jobs: list[ShardJob]) -> tuple[list[ShardResult], int]:
    """Map the shard task over jobs on the configured runner, reporting progress as they end.

    Returns the results in shard order and how many came from the cache.
    """
    logger = get_run_logger()
    run = resolved.config.run
    results: dict[int, ShardResult] = {}
    cached = 0
    selected = 0
    task = _shard_task(resolved)
    with workers_share_api(is_process_based(run)), make_shard_runner(run) as runner:
        futures = [runner.submit(task, {"job": job}) for job in jobs]
        for future in as_completed(futures):
            result = _unwrap(future)
            hit = _is_cache_hit(future)
            cached += hit
            results[result.index] = result
            selected += result.candidates
            progress.emit(
                "shard_done",
                done=len(results),
                total=len(jobs),
                selected=selected,
                cached=hit,
                shard=result.label,
            )
            logger.info(
                "shard %d/%d done%s: %d candidates so far",
                len(results),
                len(jobs),
                " (cached)" if hit else "",
                selected,
            )
        # A cached result whose files were removed (work dir cleaned) is recomputed.
        stale = [jobs[i] for i, r in results.items() if not outputs_present(r)]
        if stale:
            logger.info("%d cached shard result(s) lost their files: recomputing", len(stale))
            fresh = _shard_task(resolved, refresh=True)
            for future in [runner.submit(fresh, {"job": job}) for job in stale]:
                result = _unwrap(future)
                results[result.index] = result
                cached -= 1
    return [results[i] for i in sorted(results)], cached


def _is_cache_hit(future: Any) -> bool:
    state = getattr(future, "state", None)
    return bool(state is not None and state.name == "Cached")


def _unwrap(future: Any) -> ShardResult:
    try:
        return future.result()
    except StageError:
        raise
    except Exception as exc:
        raise StageError("shard", describe(exc)) from exc


@flow(name="distill", validate_parameters=True)
def distill(params: DistillParams) -> str:
    """Distil the recordings named by ``params`` into a new version of a golden set.

    Returns the published version id.
    """
    logger = get_run_logger()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    resolved = _validate(params)
    key_id = _key_id(resolved)
    timings["validate"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    try:
        shards = discover_shards(resolved.sources)
    except Exception as exc:
        raise StageError("discover", describe(exc)) from exc
    jobs = _plan(resolved, shards, key_id)
    timings["discover"] = time.perf_counter() - t0
    logger.info("%d shard(s) to process", len(jobs))
    progress.emit("shards_planned", total=len(jobs))

    t0 = time.perf_counter()
    results, cached = _run_shards(resolved, jobs)
    timings["shards"] = time.perf_counter() - t0
    logger.info("%d of %d shard(s) reused from cache", cached, len(jobs))

    t0 = time.perf_counter()
    selection = select_cases(results, resolved.config)
    timings["select+dedup"] = time.perf_counter() - t0
    progress.emit("selected", selected=selection.selected_count)

    t0 = time.perf_counter()
    run = resolved.config.run
    publish = publish_set.with_options(
        retry_condition_fn=retry_if_transient,
        retries=run.storage_retries,
        retry_delay_seconds=[
            run.retry_backoff_seconds * 2**i for i in range(max(1, run.storage_retries))
        ],
    )
    outcome = publish(resolved, results, selection, timings, key_id, cached)
    timings["publish"] = time.perf_counter() - t0
    progress.emit("published", version=outcome.version, report=outcome.report_path)
    logger.info("published %s@%s", resolved.set_name, outcome.version)
    return outcome.version


def run_distill(params: DistillParams) -> str:
    """Run the flow in this process (the `golden run` and `make demo` entry)."""
    return distill(params)


def shard_work_dir(resolved: ResolvedRun) -> Path:
    return resolved.work_dir / "shards"
