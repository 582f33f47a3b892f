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
import multiprocessing
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
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


def release_memory(collect: bool = True) -> None:
    """Collect garbage (unless ``collect`` is false), return Arrow's unused pool pages and
    glibc's free heap to the OS."""
    if collect:
        gc.collect()
    with suppress(Exception):
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


#: glibc's ``mallopt`` parameter for the mmap threshold (malloc.h).
_M_MMAP_THRESHOLD = -3
#: From this size on, a block gets its own mapping in the flow's process and in lean helpers
#: (``fix_mmap_threshold``); glibc's own default starts at 128 KiB but rises with every larger
#: block freed, up to 32 MB.
LARGE_BLOCK_BYTES = 1 << 20


def fix_mmap_threshold(size: int) -> bool:
    """Serve every allocation of ``size`` bytes or more from its own mapping, returned to the
    system when freed. glibc otherwise raises the threshold to the largest block freed so far
    (up to 32 MB), after which a task's large buffers come from the heap and pin it between
    tasks. False where there is no glibc."""
    if _LIBC is None or not hasattr(_LIBC, "mallopt"):
        return False
    return bool(_LIBC.mallopt(_M_MMAP_THRESHOLD, size))


#: The name Prefect gives the completed state of a task run answered from its cache.
CACHED_STATE = "Cached"


def _from_cache(state: Any) -> bool:
    return getattr(state, "name", None) == CACHED_STATE


def release_after_task(task: Any, task_run: Any, state: Any) -> None:
    """A Prefect task hook (on_completion / on_failure): runs in the process that ran the task,
    so a pool or Dask worker gives back what the task used before it takes the next one.

    Not after a cache hit: reading a cached result allocates little, and a full collection
    costs ~0.4 s in a process holding a large run's objects (a forced 1M rerun spent 38 s of
    its 129 s on it for 101 cached shard tasks)."""
    if not _from_cache(state):
        release_memory()


def trim_after_helped_task(task: Any, task_run: Any, state: Any) -> None:
    """The hook of a task that ran on one of the flow's threads while its body ran in a lean
    helper process (flows/lean_helpers.py), which gives the body's memory back itself. Here
    only free pages are returned, without a full collection: in the flow's process, which
    holds the run's selection, one took ~0.28 s per key or redaction task (10.6 s of CPU at
    1M sessions), while the thread's next task waited to be
    handed to the idle helper."""
    if not _from_cache(state):
        release_memory(collect=False)


#: polars' allocator (jemalloc, configured by this variable at process start) hands freed pages
#: back at once instead of after its ~10 s decay. For a process that runs one big step of many
#: short-lived frames (the global select+dedup): its RSS then follows its live data instead of
#: the sum of the last seconds' garbage (-20% peak at 300k candidates, for ~10% more time).
EAGER_RELEASE = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0"}


@contextmanager
def child_environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` set in the environment while processes are started (they inherit it), then
    restored; a value the user set already wins."""
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        os.environ.setdefault(name, value)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


def eager_release_here() -> None:
    """This process's polars allocator returns freed pages at once (``EAGER_RELEASE``).

    For the flow's process (`golden run`): between long waits on its workers it runs short
    polars steps (a refusal's choice again, reading ids, gathering the published cases), and
    with the default decay it would sit at the largest one's size through the redaction phase,
    next to the workers (-0.33 GB after a choice at 1M sessions). Set only while polars loads:
    the processes the flow starts inherit the environment as it was. No effect when polars is
    already loaded or not installed (the reader install)."""
    with child_environment(EAGER_RELEASE), suppress(ImportError):
        import polars as pl

        pl.Series([0])  # jemalloc reads its configuration at polars' first allocation


_frozen: set[str] = set()


def freeze_loaded_objects(what: str) -> None:
    """Once per worker process and ``what`` was loaded (the redactor: Presidio and spaCy; the
    shard step's modules): what is alive then (objects that live as long as the process)
    leaves the cyclic garbage collector's generations, so the full collection at the end of
    every task (``release_memory``) stops walking it: 0.23-0.34 s of CPU per call before,
    0.09-0.13 s after in a redact worker. Reference counting still frees any of them that
    dies. Not in the flow's own process (thread runner, local engine): its memory is the
    flow's."""
    if what in _frozen or multiprocessing.parent_process() is None:
        return
    gc.collect()
    gc.freeze()
    _frozen.add(what)
