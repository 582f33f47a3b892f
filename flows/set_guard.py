"""One writer per set: a run (or an erasure) holds the set's lock while it reads the head and
publishes, and repairs what a crashed writer left before it reads anything.

The lock and the repair are the store's (``datasets/store/set_lock.py``, ``head.py``); this module
only wires them to a resolved run and turns their failures into a clear stage error.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from golden_distill.datasets.store.aliases import LATEST, read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.head import repair_head
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.set_lock import SetLock, SetLocked, describe_owner
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import ResolvedRun

logger = logging.getLogger("golden_distill.run")


@contextlib.contextmanager
def holding_set(resolved: ResolvedRun, purpose: str) -> Iterator[str | None]:
    """Hold the set's lock (waiting up to ``run.set_lock_wait_seconds``), repair a crashed
    publish, and yield the head (``latest``) this writer builds on."""
    try:
        store = StoreFS(resolved.store_url, resolved.config.publish.storage_options or None)
        lock = SetLock(store, resolved.set_name, purpose)
    except Exception as exc:
        raise StageError("lock", describe(exc)) from None
    try:
        lock.acquire(resolved.config.run.set_lock_wait_seconds)
    except SetLocked as exc:
        raise StageError("lock", str(exc)) from None
    except Exception as exc:
        raise StageError("lock", f"taking the set's lock: {describe(exc)}") from None
    try:
        if lock.took_over is not None:
            logger.warning("took over a stale set lock (%s)", describe_owner(lock.took_over))
        try:
            repair = repair_head(store, resolved.set_name)
        except Exception as exc:
            raise StageError("repair", describe(exc)) from None
        for line in repair.describe():
            logger.warning("%s", line)
        yield read_alias(store, SetLayout(resolved.set_name), LATEST)
    finally:
        lock.release()
