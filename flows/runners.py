"""Choosing where shard tasks run, and pointing process-based workers at the running API.

A worker process (process pool or Dask) that finds no ``PREFECT_API_URL`` starts a private
ephemeral API server of its own: seconds of start-up and a SQLite database per worker, and task
runs the flow's server never sees. So before any worker starts, ``workers_share_api`` makes sure
an API is running (the same ephemeral server the flow itself uses, when there is no real one)
and exports its URL, in the settings context (serialised to every task) and in the environment
(inherited by worker processes at spawn).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any

from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner

from golden_distill.flows.lean_helpers import LeanHelpers
from golden_distill.flows.memory import EAGER_RELEASE, child_environment
from golden_distill.flows.run_config import FlowConfig
from golden_distill.flows.work_folder import WorkFolder


def current_api_url() -> str | None:
    return PREFECT_API_URL.value() or None


@contextmanager
def workers_share_api(needed: bool = True) -> Iterator[str | None]:
    """Within this block ``PREFECT_API_URL`` names a running API (starting the ephemeral one
    if there is none), so worker processes talk to it instead of booting their own."""
    url = current_api_url()
    if not needed or url:
        if url and needed:
            previous = os.environ.get("PREFECT_API_URL")
            os.environ["PREFECT_API_URL"] = url
            try:
                yield url
            finally:
                _restore_env("PREFECT_API_URL", previous)
        else:
            yield url
        return
    # heavy, and only needed when a worker-facing API server is started
    from golden_distill.flows.prefect_db import start_temporary_api

    server = start_temporary_api()
    previous = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = server.api_url
    try:
        with temporary_settings({PREFECT_API_URL: server.api_url}):
            yield server.api_url
    finally:
        _restore_env("PREFECT_API_URL", previous)


def _restore_env(name: str, previous: str | None) -> None:
    if previous is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = previous


#: Tasks a pool worker runs before it is replaced by a fresh one: a cap on what a long-lived
#: worker keeps from its tasks (fragmented heap, caches; ~25 MB more after each redact task in
#: one process, measured before the run-wide key pass). A fresh worker costs its imports and
#: Presidio's load (a few seconds of CPU), so the cap is loose: at 1M sessions (~150 tasks per
#: worker over the phases) a worker is replaced about three times; phases already start with
#: fresh workers (``ShardRunners.release``).
TASKS_PER_WORKER = 50


#: The environment local pool workers (shard, key pass, redact) start with. Not polars' eager
#: release (``EAGER_RELEASE``): a shard worker then sat 45 MB lower between tasks, but at a
#: million sessions the shard tasks' funnel step took 39 s instead of 21 s and the stage 107 s
#: instead of 88 s: a freed frame's pages are faulted in again
#: by the next one. Kept as a hook (tests/flows/test_pool_worker_env.py sets it).
POOL_WORKER_ENV: dict[str, str] = {}


class _RefillingExecutor(ProcessPoolExecutor):
    """``ProcessPoolExecutor`` that always refills to ``max_workers`` when asked to adjust.

    With ``max_tasks_per_child``, Python before 3.12.3 (gh-115634) may leave the pool with no
    process at all: a worker retiring after its last task takes a stale idle-worker token
    instead of spawning its replacement, and the queued tasks wait forever."""

    def _adjust_process_count(self) -> None:
        while len(self._processes) < self._max_workers:  # type: ignore[attr-defined]
            self._spawn_process()  # type: ignore[attr-defined]


class RecyclingProcessPool(ProcessPoolTaskRunner):
    """Prefect's process pool, with each worker process replaced after ``TASKS_PER_WORKER``
    tasks (``concurrent.futures``' ``max_tasks_per_child``), so a worker's memory is bounded
    by a few tasks whatever the number of shards. Prefect builds its executor in
    ``__enter__`` without that option; no worker has started yet then (processes spawn on the
    first submit), so the executor is rebuilt with the same arguments plus the bound."""

    def __init__(self, *args: Any, tasks_per_worker: int = TASKS_PER_WORKER, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.tasks_per_worker = tasks_per_worker

    def duplicate(self) -> RecyclingProcessPool:
        twin = super().duplicate()
        twin.tasks_per_worker = self.tasks_per_worker
        return twin

    def __enter__(self) -> RecyclingProcessPool:
        super().__enter__()
        built = self._executor
        if built is not None:
            self._executor = _RefillingExecutor(
                max_workers=built._max_workers,  # type: ignore[attr-defined]
                mp_context=built._mp_context,  # type: ignore[attr-defined]
                initializer=built._initializer,  # type: ignore[attr-defined]
                initargs=built._initargs,  # type: ignore[attr-defined]
                max_tasks_per_child=self.tasks_per_worker,
            )
            built.shutdown(wait=False)
        return self


def is_process_based(run: FlowConfig) -> bool:
    return run.task_runner in ("process", "dask")


def make_shard_runner(run: FlowConfig) -> TaskRunner:
    """The task runner for shard tasks, as the `run:` config (or --dask-address) asks."""
    if run.task_runner == "dask":
        # optional: Dask (prefect-dask, distributed) only for run.task_runner: dask
        from prefect_dask import DaskTaskRunner

        if run.dask_address:
            return DaskTaskRunner(address=run.dask_address)
        return DaskTaskRunner(
            cluster_kwargs={
                "n_workers": run.dask_workers,
                "threads_per_worker": 1,
                "processes": True,
                # the scheduler's HTTP server (dashboard, health) starts even without a
                # dashboard: on loopback and a free port, never on every interface at :8787
                "dashboard_address": "127.0.0.1:0",
            }
        )
    if run.task_runner == "process":
        return RecyclingProcessPool(max_workers=run.max_parallel_shards)
    return ThreadPoolTaskRunner(max_workers=run.max_parallel_shards)


class ShardRunners:
    """The runners of one flow run's per-shard tasks, started only when needed.

    A phase whose tasks are all cached (their result files exist) runs on a thread pool in the
    flow's process: Prefect still checks each cache entry and records a Cached task run, but no
    worker process or Dask cluster is started just to read results back. The configured runner
    starts on the first phase with real work; ``release()`` stops local workers between phases
    so their memory is free while the flow's process runs the global step.
    """

    def __init__(self, run: FlowConfig) -> None:
        self.run = run
        self._stack = ExitStack()
        self._heavy_stack = ExitStack()
        self._light: TaskRunner | None = None
        self._heavy: TaskRunner | None = None
        self._helpers: LeanHelpers | None = None

    def __enter__(self) -> ShardRunners:
        self._stack.__enter__()
        return self

    def __exit__(self, *exc: object) -> bool | None:
        self._close_heavy()
        return self._stack.__exit__(*exc)  # type: ignore[arg-type]

    def _threads(self) -> TaskRunner:
        if self._light is None:
            pool = ThreadPoolTaskRunner(max_workers=self.run.max_parallel_shards)
            self._light = self._stack.enter_context(pool)
        return self._light

    def pick(self, likely_cached: bool, lean: bool = False) -> TaskRunner:
        """The runner of a phase. ``lean``: its tasks hand their bodies to ``in_helper``
        (flows/lean_helpers.py); with a local process pool they then run on this process's
        threads, and their bodies in lean helper processes started here (no Prefect in them)."""
        if likely_cached or self.run.task_runner == "thread":
            return self._threads()
        if lean and self.run.task_runner == "process":
            if self._helpers is None:
                self._heavy_stack.enter_context(workers_share_api(True))  # a key's Secret block
                self._heavy_stack.enter_context(child_environment(POOL_WORKER_ENV))
                helpers = LeanHelpers(self.run.max_parallel_shards)
                self._helpers = self._heavy_stack.enter_context(helpers)
            return self._threads()
        if self._heavy is None:
            self._heavy_stack.enter_context(workers_share_api(is_process_based(self.run)))
            # set while the pool's workers spawn (on its first submits), restored on release
            self._heavy_stack.enter_context(child_environment(POOL_WORKER_ENV))
            self._heavy = self._heavy_stack.enter_context(make_shard_runner(self.run))
        return self._heavy

    @property
    def helpers_active(self) -> bool:
        """Whether lean helper processes run the task bodies of a lean phase (``pick``)."""
        return self._helpers is not None

    @contextmanager
    def one_worker(self) -> Iterator[TaskRunner]:
        """A pool of one fresh local worker process for one big task (the global select and
        dedup): its libraries (scikit-learn, scipy) and working memory leave with the process
        instead of staying in the flow's process next to the redact workers."""
        with (
            workers_share_api(True),
            child_environment(EAGER_RELEASE),
            RecyclingProcessPool(max_workers=1) as pool,
        ):
            yield pool

    def release(self) -> None:
        """Stop local worker processes between phases, so their memory is free while the
        flow's process runs a global step. A Dask runner stays up for the next phase (its
        workers release memory after each task): a private cluster is started once a run."""
        if self.run.task_runner != "dask":
            self._close_heavy()

    def _close_heavy(self) -> None:
        """Stop the configured runner (a remote Dask cluster is only disconnected from)."""
        self._heavy_stack.close()
        self._heavy_stack = ExitStack()
        self._heavy = None
        self._helpers = None


def likely_cached(keys: list[str | None], work: WorkFolder, results: str) -> bool:
    """True when every task has a cache key whose result file exists in the ``results`` folder
    of the work folder (one listing, also on object storage; Prefect still decides)."""
    if not keys or any(k is None for k in keys):
        return False
    present = set(work.list_names(results))
    return all(k in present for k in keys)
