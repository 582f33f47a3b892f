"""Giving memory back to the OS after a big step, so a long-lived process stays at its live size.

A worker process runs many shard and redact tasks one after another, and the flow's process
runs the global steps between phases. What a finished step allocated is freed, but the
allocators keep it: glibc malloc keeps freed pages in its arenas (and fragmentation keeps
whole arenas), Arrow's jemalloc pool keeps dirty pages. Over a run each process then sits near
the largest step it ever ran, and the process tree's peak is the sum of those high-water marks.
``release_memory`` collects garbage and hands the free pages back; it changes no data.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from contextlib import suppress
from typing import Any


def _libc() -> Any | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    with suppress(OSError):
        libc = ctypes.CDLL(name)
        if hasattr(libc, "malloc_trim"):  # glibc only (not musl, not macOS)
            return libc
    return None


_LIBC = _libc()


def release_memory() -> None:
    """Collect garbage, return Arrow's unused pool pages and glibc's free heap to the OS."""
    gc.collect()
    with suppress(Exception):
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def release_after_task(task: Any, task_run: Any, state: Any) -> None:
    """A Prefect task hook (on_completion / on_failure): runs in the process that ran the task,
    so a pool or Dask worker gives back what the task used before it takes the next one."""
    release_memory()
