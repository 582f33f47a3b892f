"""One timing helper for the flow and its tasks: seconds per stage, failures named by stage.

``clock.stage("read")`` times a block and adds it to ``clock.seconds["read"]``; when the clock
names where it runs (a shard), a failure inside becomes a ``StageError`` naming the stage and
the shard (library messages withheld, see errors.describe). ``clock.call(stage, fn, *args)``
does the same for one call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from golden_distill.flows.errors import StageError, describe

T = TypeVar("T")


class StageClock:
    def __init__(self, where: str | None = None) -> None:
        self.where = where
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        except StageError:
            raise
        except Exception as exc:
            if self.where is None:
                raise
            raise StageError(name, f"shard {self.where}: {describe(exc)}") from None
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def call(self, name: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.stage(name):
            return fn(*args, **kwargs)
