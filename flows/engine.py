"""Where the flow's steps run: on Prefect (the default) or in this process (`--local`).

Both engines run the same task functions in the same order with the same inputs, so they
publish the same content. ``PrefectEngine`` maps shard tasks on the configured task runner,
with Prefect's result cache, retries with exponential backoff and artifacts. ``LocalEngine`` is
the lighter mode for small runs by hand: a thread pool in this process, no Prefect API (the
temporary API's start-up dominated small runs), results reused from the content-addressed
shard folders, no retries and no artifacts.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from prefect import get_run_logger
from prefect.tasks import exponential_backoff

from golden_distill.flows import progress
from golden_distill.flows.bounded import AHEAD_PER_WORKER, completed_bounded, in_flight_limit
from golden_distill.flows.errors import StageError, describe, retry_if_transient
from golden_distill.flows.memory import (
    LARGE_BLOCK_BYTES,
    fix_mmap_threshold,
    release_after_task,
    release_memory,
    trim_after_helped_task,
)
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.runners import ShardRunners, likely_cached
from golden_distill.flows.tasks.publish import PublishJob, PublishOutcome, publish_set
from golden_distill.flows.tasks.select import select_cases
from golden_distill.flows.tasks.selection_result import Selection
from golden_distill.flows.tasks.task_guards import outputs_present

#: Where the local engine keeps a task's result, inside the task's content-addressed folder.
RESULT_FILE = "result.pkl"
#: Stages whose task bodies run through ``in_helper`` (flows/lean_helpers.py): with a local
#: process pool, their tasks run on the flow's threads and the bodies in lean helpers.
LEAN_STAGES = frozenset({"keys", "redact"})


def retry_options(resolved: ResolvedRun) -> dict[str, Any]:
    """Retries of storage-touching tasks: I/O errors only, with exponential backoff."""
    run = resolved.config.run
    return {
        "retries": run.storage_retries,
        "retry_delay_seconds": exponential_backoff(backoff_factor=run.retry_backoff_seconds),
        "retry_condition_fn": retry_if_transient,
    }


def result_storage(resolved: ResolvedRun) -> Any:
    """Where Prefect persists cached results: a ``Path`` (a str is a block slug) for a local
    work folder; for a URL one, a ``RemoteFileSystem`` block (shared by remote workers), saved
    on the API under a name derived from its location (Prefect only takes saved blocks; it
    holds client options such as an endpoint, never credentials: those come from the
    environment of each machine)."""
    location = resolved.config.run.results_location()
    storage = resolved.work.result_storage(location)
    if isinstance(storage, Path):
        return storage
    name = f"golden-work-{hashlib.sha256(location.encode()).hexdigest()[:16]}"
    storage.save(name, overwrite=True)
    return storage


def _with_retries(
    task: Any,
    resolved: ResolvedRun,
    refresh: bool = False,
    storage: Any = None,
    helped: bool = False,
) -> Any:
    """Cached per-shard task options: results in the work folder, retries with backoff on I/O
    errors; the worker gives back the task's memory when it ends (flows/memory.py). ``helped``:
    the bodies run in lean helpers, which give back their own memory; the flow's thread that
    ran the task then only returns free pages (``trim_after_helped_task``)."""
    hook = trim_after_helped_task if helped else release_after_task
    return task.with_options(
        result_storage=storage if storage is not None else result_storage(resolved),
        refresh_cache=refresh or None,
        on_completion=[hook],
        on_failure=[hook],
        **retry_options(resolved),
    )


def _unwrap(future: Any, stage: str) -> Any:
    try:
        return future.result()
    except StageError:
        raise
    except Exception as exc:
        raise StageError(stage, describe(exc)) from None


def _report(event: str, result: Any, done: int, total: int, counted: int, hit: bool) -> None:
    progress.emit(event, done=done, total=total, selected=counted, cached=hit, shard=result.label)


def _selected(result: Any) -> int:
    stats = getattr(result, "stats", None) or {}
    return int(getattr(result, "candidates", 0) or stats.get("redacted", 0))


class PrefectEngine:
    """Tasks on Prefect: the configured task runner, result cache, retries, artifacts."""

    artifacts = True

    def __init__(self, resolved: ResolvedRun) -> None:
        self.resolved = resolved
        self.runners = ShardRunners(resolved.config.run)
        self._result_storage: Any = None

    def __enter__(self) -> PrefectEngine:
        # Worker processes inherit this at spawn: glibc then keeps 2 malloc arenas instead of
        # up to 8 per core for the threads Prefect starts in each worker (less retained heap).
        os.environ.setdefault("MALLOC_ARENA_MAX", "2")
        # This process's large blocks (the key digests' merge, results unpickled from workers)
        # get their own mappings, returned when freed, instead of heap that the run's
        # long-lived objects then pin through redaction (flows/memory.py)
        fix_mmap_threshold(LARGE_BLOCK_BYTES)
        self.runners.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.runners.__exit__(*exc)

    @property
    def logger(self) -> Any:
        return get_run_logger()

    def _storage(self) -> Any:
        if self._result_storage is None:
            self._result_storage = result_storage(self.resolved)
        return self._result_storage

    def release(self) -> None:
        self.runners.release()  # free local workers' memory for the global step (not Dask's)
        release_memory()  # and this process's: the shard phase's freed heap (results, futures)

    def fresh_workers(self) -> None:
        """The next phase starts fresh local worker processes (a process pool's are stopped
        now; threads and Dask workers stay: a cluster is slow to start, its workers are
        bounded by Dask) and this process trims its heap."""
        if self.resolved.config.run.task_runner == "process":
            self.runners.release()
        release_memory()

    def map(
        self, task: Any, jobs: list[Any], event: str, stage: str, parallel: int | None = None
    ) -> tuple[dict, int]:
        """Submit ``task`` for every job, report each as it ends; results by index, hits.
        ``parallel``: at most this many tasks at once (a lean stage then starts no more helper
        processes than that), else as many as the runner has workers."""
        resolved = self.resolved
        work = resolved.work
        runner = self.runners.pick(
            likely_cached(
                [job.cache_key for job in jobs], work, resolved.config.run.results_location()
            ),
            lean=stage in LEAN_STAGES,
        )
        results: dict[int, Any] = {}
        cached = counted = 0
        storage = self._storage()
        helped = stage in LEAN_STAGES and self.runners.helpers_active
        submitted = _with_retries(task, resolved, storage=storage, helped=helped)
        limit = in_flight_limit(resolved.config.run)  # the flow holds a few calls, not all
        if parallel is not None:
            limit = min(limit or parallel, parallel)

        def submit(job: Any) -> Any:
            return runner.submit(submitted, {"job": job})

        for future in completed_bounded(submit, jobs, limit):
            result = _unwrap(future, stage)
            state = getattr(future, "state", None)
            hit = bool(state is not None and state.name == "Cached")
            cached += hit
            results[result.index] = result
            counted += _selected(result)
            _report(event, result, len(results), len(jobs), counted, hit)
            self.logger.info("%s %d/%d%s", event, len(results), len(jobs), " (cached)" * hit)
        # A cached result whose files were removed (work dir cleaned) is recomputed.
        by_index = {job.index: job for job in jobs}
        stale = [by_index[i] for i, r in results.items() if not outputs_present(r, work)]
        if stale:
            self.logger.info("%d cached result(s) lost their files: recomputing", len(stale))
            fresh = _with_retries(task, resolved, refresh=True, storage=storage, helped=helped)
            for future in completed_bounded(
                lambda job: runner.submit(fresh, {"job": job}), stale, limit
            ):
                result = _unwrap(future, stage)
                results[result.index] = result
                cached -= 1
                progress.emit("recomputed", stage=stage, shard=result.label)
        return results, cached

    def select(self, results: list[Any], cache_key: str | None) -> Selection:
        """The global select and dedup. With a local process pool and no cached result, in a
        worker process of its own: the flow's process then never loads scikit-learn/scipy nor
        keeps dedup's freed heap while the redact workers run (~0.3 GB of the tree's peak);
        only the ``Selection`` comes back. A cached selection is read in this process."""
        task = select_cases.with_options(result_storage=self._storage())
        run = self.resolved.config.run
        cached = likely_cached([cache_key], self.resolved.work, run.results_location())
        if run.task_runner != "process" or cached:
            selection = task(results, self.resolved, cache_key=cache_key)
            if not selection.frames_present():  # a cached result whose files were removed
                self.logger.info("the cached selection lost its files: recomputing")
                fresh = task.with_options(refresh_cache=True)
                selection = fresh(results, self.resolved, cache_key=cache_key)
            release_memory()  # dedup's working memory, before the redact workers start
            return selection
        with self.runners.one_worker() as pool:
            params = {"results": results, "resolved": self.resolved, "cache_key": cache_key}
            future = pool.submit(task, params)
            future.wait()
        # read once the worker has exited: the result is read back from its persisted record
        # (~50 MB of JSON at 2M sessions, ~0.27 GB for a moment), which beside the worker's
        # last ~1 GB was the run's peak
        selection = future.result()
        release_memory()
        return selection

    def publish(self, job: PublishJob) -> PublishOutcome:
        return publish_set.with_options(**retry_options(self.resolved))(job)


class LocalEngine:
    """The same tasks in this process, on a thread pool, without a Prefect API."""

    artifacts = False

    def __init__(self, resolved: ResolvedRun) -> None:
        if resolved.config.run.dask_address:
            raise StageError("validate", "--local runs in this process: no --dask-address")
        self.resolved = resolved  # a `process` task_runner runs on threads here too
        self.work = resolved.work
        self.logger = logging.getLogger("golden_distill.run")

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def release(self) -> None:
        return None

    def fresh_workers(self) -> None:
        release_memory()

    def _cached(self, job: Any) -> Any | None:
        if not job.cache_key:
            return None
        try:
            result = pickle.loads(self.work.read_bytes(f"{job.out_dir}/{RESULT_FILE}"))
        except (OSError, pickle.UnpicklingError, EOFError):
            return None
        return result if getattr(result, "cache_key", None) == job.cache_key else None

    def _run(self, task: Any, job: Any) -> tuple[Any, bool]:
        found = self._cached(job)
        if found is not None and outputs_present(found, self.work):
            return found, True
        result = task.fn(job)
        if job.cache_key:
            self.work.write_bytes(f"{job.out_dir}/{RESULT_FILE}", pickle.dumps(result))
        return result, False

    def map(
        self, task: Any, jobs: list[Any], event: str, stage: str, parallel: int | None = None
    ) -> tuple[dict, int]:
        results: dict[int, Any] = {}
        cached = counted = 0
        workers = self.resolved.config.run.max_parallel_shards
        workers = min(workers, parallel) if parallel else workers
        with ThreadPoolExecutor(max_workers=workers) as pool:
            submit = lambda job: pool.submit(self._run, task, job)  # noqa: E731
            for future in completed_bounded(submit, jobs, AHEAD_PER_WORKER * workers):
                result, hit = _unwrap(future, stage)
                cached += hit
                results[result.index] = result
                counted += _selected(result)
                _report(event, result, len(results), len(jobs), counted, hit)
        return results, cached

    def select(self, results: list[Any], cache_key: str | None) -> Selection:
        selection = select_cases.fn(results, self.resolved, cache_key=cache_key)
        release_memory()
        return selection

    def publish(self, job: PublishJob) -> PublishOutcome:
        return publish_set.fn(job)
