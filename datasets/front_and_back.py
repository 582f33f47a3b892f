"""Work shared by this process and one helper process, the results in input order.

Some steps run while the machine's other core is idle: publish's replay check of the staged
case files (datasets/store/staged_check.py) and the select step's clustering of dedup buckets
(flows/tasks/dedup_step.py). Each item is a pure function of its input, so this process takes
items from the front while one spawned helper process takes them from the back, until they
meet: neither waits for the other's share when one is slower (the helper is still starting, an
item is larger). Not a pool of two helpers: this process would only wait, and every process
carries its libraries (~0.25 GB) in phases where the run's memory peaks.

Results come in input order, as one process would give them: this process's own (the front)
as soon as each is done, the helper's (the back, every index above the front's) at the end.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Items queued for the helper ahead of its current one (it never waits for work).
HELPER_QUEUE = 2


def can_start_helper() -> bool:
    """Whether this process may start a child: a daemonic process (a Dask worker's) may not."""
    return not multiprocessing.current_process().daemon


def helper_would_help() -> bool:
    """Whether a helper can share the work: a second core, and the right to start a child."""
    return (os.cpu_count() or 1) >= 2 and can_start_helper()


def front_and_back(
    items: Sequence[T], work: Callable[..., R], *args: Any
) -> Iterator[tuple[int, R]]:
    """``(index, work(item, *args))`` for every item, in index order: this process works from
    the front, one helper process (spawned: the caller may run threads) from the back.
    ``work`` and its arguments must be picklable; a helper's exception is raised here."""
    front, back = 0, len(items) - 1
    queued: deque[tuple[int, Future[R]]] = deque()
    finished: dict[int, R] = {}
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        while front <= back:
            while len(queued) < HELPER_QUEUE and front < back:
                queued.append((back, pool.submit(work, items[back], *args)))
                back -= 1
            yield front, work(items[front], *args)
            front += 1
            while queued and queued[0][1].done():
                index, job = queued.popleft()
                finished[index] = job.result()
        for index, job in queued:
            finished[index] = job.result()
    expected = range(front, len(items))
    if sorted(finished) != list(expected):  # never expected: an item must not go missing
        raise RuntimeError(f"front_and_back: items {sorted(set(expected) - set(finished))} lost")
    for index in expected:
        yield index, finished.pop(index)
