"""Lean helper processes: a task's CPU-heavy body in a process that never imports Prefect.

A Prefect process-pool worker carries Prefect's runtime (its engine, client, settings and
~1,100 more modules: ~0.1 GB) beside what the task itself needs. In the redaction phase, where
a run's memory peaks (two redaction processes next to the flow and its API), that is pure
overhead: the body needs Presidio, pyarrow and polars only. So with a local process pool the
flow runs the redaction *tasks* on its own threads (Prefect still records, caches and retries
each one) and each task hands its body to a helper process of this pool, which imports only
the body's module (``flows/tasks/redact_body.py``).

The pool is active while a ``LeanHelpers`` block runs; ``in_helper`` runs a body there, or in
the calling process when no pool is active (thread runner, Dask workers, ``--local``), so the
body's results do not depend on where it ran. A helper that dies (killed, out of memory) fails
the call that was running on it; the pool is replaced, so a retry finds live helpers.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from golden_distill.flows.memory import LARGE_BLOCK_BYTES, fix_mmap_threshold, release_memory
from golden_distill.redaction.process_caches import forget_values

T = TypeVar("T")

_active: LeanHelpers | None = None


def _started() -> None:
    """A helper's first step, before any call: a task's large blocks (the run's key digests,
    ~32 MB at 2M sessions, read by every redaction task) get their own mappings and leave with
    it instead of pinning the heap (over 40 shards of the 2M run a helper peaked at 0.62
    instead of 0.66 GB for the same CPU)."""
    fix_mmap_threshold(LARGE_BLOCK_BYTES)


def _call_then_release(fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    """In the helper: the body, then its memory given back before the next call (what
    ``release_after_task`` does for a Prefect worker). The caches holding values the body saw
    are emptied first (``redaction/process_caches.py``): no value outlives its call, and the
    pages they would pin are returned."""
    try:
        return fn(*args)
    finally:
        forget_values()
        release_memory()


class LeanHelpers:
    """``workers`` helper processes (spawned: the flow runs threads), started on first use."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self.replaced = 0  # pools replaced after a helper died

    def _current_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_started,
                )
            return self._pool

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a helper process; its exception if it raises."""
        pool = self._current_pool()
        try:
            return pool.submit(_call_then_release, fn, args).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:  # the first caller to see it replaces the pool
                    self._pool = None
                    self.replaced += 1
            pool.shutdown(wait=False, cancel_futures=True)
            raise

    def __enter__(self) -> LeanHelpers:
        global _active
        if _active is not None:
            raise RuntimeError("a pool of lean helpers is already active in this process")
        _active = self
        return self

    def __exit__(self, *exc: object) -> None:
        global _active
        _active = None
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def in_helper(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a lean helper when a pool is active in this process, else right here.
    ``fn`` must be importable without Prefect (a module-level function of such a module)."""
    helpers = _active
    if helpers is None:
        return fn(*args)
    return helpers.run(fn, *args)
