"""Shared by the benchmark scripts: run a measurement in a fresh process and read its peak RSS.

A fresh ``spawn`` process per measurement keeps one contender's memory (and warm caches) out of
the next one's figures.
"""

from __future__ import annotations

import multiprocessing as mp
import resource
from typing import Any


def rss_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_child(target: Any, *args: Any) -> dict[str, Any]:
    """Run ``target(*args, queue)`` in a spawned process; return what it put on the queue."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    if proc.exitcode:
        raise SystemExit(f"{target.__name__} failed with exit code {proc.exitcode}")
    return result
