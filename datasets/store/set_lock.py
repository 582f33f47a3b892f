"""One writer per set: the set lock that a run, an erasure and a repair hold while they change it.

Why: publishing grows the set from its head (``latest``) and moves the watermark; two writers
that read the same head would each make a successor of it and one window would be lost. The
compare-and-swap at publish time (``publish.publish_version(expected_parent=...)``) catches that
after the fact; the lock makes it not happen: a second run waits for the first, then reads the
new head.

The lock is one small object, ``<set>/_lock``, created only-if-absent (``O_EXCL`` locally,
``If-None-Match: *`` on S3) and holding its owner: a random token, host, pid, what holds it
(``run``, ``erase``...) and a heartbeat time refreshed by a daemon thread. Every change to it is
a compare-and-swap (``StoreFS.update``), so two processes can never both believe they hold it.

A lock is *stale*, and may be taken over, when its owner is certainly gone:

* same host: the owner's pid is not alive (checked with ``kill(pid, 0)``), whatever the
  heartbeat says (a paused or slow process on this machine keeps its lock);
* another host: its heartbeat is older than ``stale_after`` seconds (the holder refreshes it
  every ``stale_after / 4``), since its pid cannot be checked from here.

Takeover is itself a compare-and-swap on the exact stale bytes, so of two processes that found
the same stale lock exactly one wins. The owner's record never holds data, only who and when.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout

#: Seconds without a heartbeat after which another host's lock counts as abandoned.
STALE_AFTER_SECONDS = 120.0


class SetLocked(RuntimeError):
    """The set is held by another writer (the message names it) and waiting did not help."""


def lock_path(layout: SetLayout) -> str:
    return f"{layout.set_name}/_lock"


def _now() -> float:
    return time.time()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


def describe_owner(owner: dict[str, Any]) -> str:
    """``run by pid 123 on host-a since 2026-12-04T03:00:00Z`` (for messages)."""
    since = datetime.fromtimestamp(float(owner.get("acquired_at", 0)), tz=UTC)
    return (
        f"{owner.get('purpose', '?')} by pid {owner.get('pid')} on {owner.get('host')} "
        f"since {since.isoformat(timespec='seconds')}"
    )


def is_stale(owner: dict[str, Any], *, stale_after: float, now: float | None = None) -> bool:
    """True when the owner of a lock is certainly gone (see the module docstring)."""
    if owner.get("host") == socket.gethostname():
        pid = owner.get("pid")
        return not (isinstance(pid, int) and _pid_alive(pid))
    beat = owner.get("heartbeat_at")
    if not isinstance(beat, int | float):
        return True
    return (now if now is not None else _now()) - beat > stale_after


def _decode(data: bytes | None) -> dict[str, Any] | None:
    if data is None or not data.strip():
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}  # unreadable: treated as stale (no host, no heartbeat)
    return value if isinstance(value, dict) else {}


def read_owner(store: StoreFS, layout: SetLayout) -> dict[str, Any] | None:
    """The current holder of the set's lock, or None."""
    try:
        return _decode(store.read_bytes(lock_path(layout)))
    except FileNotFoundError:
        return None


@dataclass
class SetLock:
    """The lock of one set; use ``hold`` (a context manager) rather than the parts."""

    store: StoreFS
    set_name: str
    purpose: str = "run"
    stale_after: float = STALE_AFTER_SECONDS

    def __post_init__(self) -> None:
        self.layout = SetLayout(self.set_name)
        self.token = uuid.uuid4().hex
        self.took_over: dict[str, Any] | None = None  # the stale owner this lock replaced
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._acquired_at = 0.0

    def _record(self) -> bytes:
        return orjson.dumps(
            {
                "token": self.token,
                "purpose": self.purpose,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "acquired_at": self._acquired_at,
                "heartbeat_at": _now(),
            }
        )

    def _mine(self, data: bytes | None) -> bool:
        owner = _decode(data)
        return bool(owner) and owner.get("token") == self.token  # type: ignore[union-attr]

    def try_acquire(self) -> dict[str, Any] | None:
        """Take the lock if it is free or stale; returns None on success, else the holder."""
        self._acquired_at = _now()
        holder: dict[str, Any] | None = None
        taken: dict[str, Any] | None = None

        def change(old: bytes | None) -> bytes | None:
            nonlocal holder, taken
            owner = _decode(old)
            if owner is not None and not is_stale(owner, stale_after=self.stale_after):
                holder = owner
                return None  # held: leave it
            holder, taken = None, owner
            return self._record()

        _old, new = self.store.update(lock_path(self.layout), change)
        if not self._mine(new):
            return holder or _decode(new) or {}
        self.took_over = taken
        return None

    def acquire(self, wait_seconds: float = 0.0, poll: float = 0.5) -> None:
        """Take the lock, waiting up to ``wait_seconds`` for the holder; ``SetLocked`` if not."""
        deadline = time.monotonic() + max(0.0, wait_seconds)
        while True:
            holder = self.try_acquire()
            if holder is None:
                self._start_heartbeat()
                return
            if time.monotonic() >= deadline:
                raise SetLocked(
                    f"set {self.set_name!r} is locked ({describe_owner(holder)}; "
                    f"{self.store.display(lock_path(self.layout))}): one writer per set at a "
                    "time; nothing was changed, run again when it is done"
                )
            time.sleep(poll)

    def _start_heartbeat(self) -> None:
        interval = max(0.5, self.stale_after / 4)

        def beat() -> None:
            while not self._stop.wait(interval):
                with contextlib.suppress(Exception):  # a missed beat is retried next interval
                    self.store.update(
                        lock_path(self.layout),
                        lambda old: self._record() if self._mine(old) else None,
                    )

        self._thread = threading.Thread(target=beat, name="golden-set-lock", daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Give the lock back (only if it is still this process's: never another's)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(FileNotFoundError):
            if self._mine(self.store.read_bytes(lock_path(self.layout))):
                self.store.remove(lock_path(self.layout))

    @contextlib.contextmanager
    def hold(self, wait_seconds: float = 0.0) -> Iterator[SetLock]:
        self.acquire(wait_seconds)
        try:
            yield self
        finally:
            self.release()


def set_lock(
    store: StoreFS, set_name: str, purpose: str, *, stale_after: float = STALE_AFTER_SECONDS
) -> SetLock:
    return SetLock(store, set_name, purpose, stale_after)
