"""Progress events from a running flow to whoever shows them (the `golden run` progress line).

The flow body runs in the caller's process even when shard tasks run elsewhere (process pool,
Dask), so a plain in-process listener list is enough. Events carry counts only, never content.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

Listener = Callable[[str, dict[str, Any]], None]
_listeners: list[Listener] = []


def emit(event: str, **data: Any) -> None:
    """Tell every listener; a failing listener never fails the run."""
    for listener in list(_listeners):
        with suppress(Exception):  # display problems must never stop a run
            listener(event, data)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)
