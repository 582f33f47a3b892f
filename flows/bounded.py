"""Submitting a phase's tasks a few at a time, so the flow's memory does not grow with shards.

Submitting every shard's task at once made the flow's process hold, for each one until the end
of the phase, the pickled call Prefect prepares at submit time (context, settings, environment,
job) plus its future: ~5 MB per shard, ~1 GB of the flow's peak at 2M sessions (200 shards).
``completed_bounded`` keeps at most ``limit`` tasks submitted and unfinished; each time one
ends, the next job is submitted *before* the finished one is handed to the caller, so the
workers never wait on the flow. Results, their order of arrival and the work each task does
are those of submitting everything at once; only the flow's bookkeeping is bounded.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from golden_distill.flows.run_config import FlowConfig

J = TypeVar("J")

#: Tasks kept submitted ahead per worker: one running, one queued so a worker never idles.
AHEAD_PER_WORKER = 2


def in_flight_limit(run: FlowConfig) -> int | None:
    """How many tasks a phase keeps submitted: twice the workers of a local pool or private
    Dask cluster. A remote cluster's size is not known here (it may grow): unbounded, its
    scheduler queues the tasks."""
    if run.dask_address:
        return None
    workers = run.dask_workers if run.task_runner == "dask" else run.max_parallel_shards
    return AHEAD_PER_WORKER * max(1, workers)


def completed_bounded(
    submit: Callable[[J], Any], jobs: Iterable[J], limit: int | None
) -> Iterator[Any]:
    """Yield the futures of ``submit(job)`` for every job, as each completes, with at most
    ``limit`` (``None``: all) submitted and not yet yielded. Works with Prefect futures and
    ``concurrent.futures`` futures alike (both call ``add_done_callback(fn)`` with the future).
    If the caller stops early (an error), no further job is submitted."""
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    pending = iter(jobs)
    in_flight = 0

    def start_next() -> bool:
        job = next(pending, _END)
        if job is _END:
            return False
        submit(job).add_done_callback(finished.put)
        return True

    while (limit is None or in_flight < limit) and start_next():
        in_flight += 1
    while in_flight:
        future = finished.get()
        in_flight -= 1
        if start_next():
            in_flight += 1
        yield future


_END: Any = object()
