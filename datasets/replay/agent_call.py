"""Calling the agent under test, and telling a broken agent from a regression.

``agent(case, tools)`` may be a plain function or ``async def`` (awaited on one event loop per
replay). What it returns must be an ``AgentResult``: a coroutine (a plain function handing back
an un-awaited coroutine), a generator or anything else is a usage error (``AgentUsageError``,
exit 2), not thousands of diffs; so is an agent that raises on every case of a run. An agent
that raises on some cases has a finding on those cases: the row names the exception type and
the line that raised it, never its message (it may quote what the agent computed); the usage
error carries the whole traceback, message included, to the console and the report.
"""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from golden_distill.datasets.replay.contract import AgentResult


class AgentUsageError(Exception):
    """The agent breaks the contract: a usage error (exit 2), with the traceback to show."""

    def __init__(self, message: str, traceback_text: str | None = None) -> None:
        super().__init__(message, traceback_text)
        self.message = message
        self.traceback_text = traceback_text

    def __str__(self) -> str:
        return self.message


@dataclass(slots=True)
class AgentFailure:
    """The agent raised on one case."""

    kind: str  # the exception type and where it was raised: "KeyError at agent.py:12 in run"
    traceback: str  # the whole traceback, message included (for the usage error only)


def is_async(agent: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(
        getattr(agent, "__call__", None)  # noqa: B004 (an object with ``async def __call__``)
    )


class AgentCaller:
    """Calls one agent case after case (an async agent on one event loop)."""

    def __init__(self, agent: Callable[..., Any]) -> None:
        self.agent = agent
        self.name = getattr(agent, "__qualname__", type(agent).__name__)
        self._loop: asyncio.AbstractEventLoop | None = (
            asyncio.new_event_loop() if is_async(agent) else None
        )

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def __call__(self, case: Any, tools: Any) -> tuple[AgentResult | None, AgentFailure | None]:
        try:
            if self._loop is not None:
                returned = self._loop.run_until_complete(self.agent(case, tools))
            else:
                returned = self.agent(case, tools)
        except AgentUsageError:
            raise
        except Exception as exc:  # the agent's failure is a finding, not a harness crash
            return None, AgentFailure(_describe(exc), traceback.format_exc())
        if type(returned) is AgentResult or isinstance(returned, AgentResult):
            return returned, None
        raise AgentUsageError(self._wrong_return(returned))

    def _wrong_return(self, returned: Any) -> str:
        if inspect.iscoroutine(returned):
            returned.close()  # never awaited: close it so Python does not warn about it
            return (f"agent {self.name} returned a coroutine, not AgentResult: declare it "
                    "`async def` (it is then awaited) or await inside it")  # fmt: skip
        if inspect.isgenerator(returned) or inspect.isasyncgen(returned):
            return (f"agent {self.name} returned a generator, not AgentResult: return the "
                    "result instead of yielding it")  # fmt: skip
        return (f"agent {self.name} returned {type(returned).__name__}, not AgentResult "
                "(golden_distill.datasets.replay.AgentResult)")  # fmt: skip


_HARNESS = str(Path(__file__).parent)


def _describe(exc: BaseException) -> str:
    """The type and the agent's line that raised it (the stubs' own frames skipped: a recorded
    failure or a fixture mismatch is raised inside the harness, on the agent's call)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return type(exc).__name__
    own = [f for f in frames if not f.filename.startswith(_HARNESS)]
    last = (own or frames)[-1]
    return (
        f"{type(exc).__name__} at {last.filename.rsplit('/', 1)[-1]}:{last.lineno} in {last.name}"
    )


def raised_everywhere(failures: list[AgentFailure | None]) -> AgentUsageError | None:
    """A usage error when the agent raised on every case (at least one)."""
    if not failures or any(f is None for f in failures):
        return None
    first = failures[0]
    assert first is not None
    kinds = sorted({f.kind.split(" ", 1)[0] for f in failures if f is not None})
    others = [k for k in kinds if not first.kind.startswith(k + " ")]
    also = f" (also {', '.join(others)})" if others else ""
    return AgentUsageError(
        f"the agent raised on every case ({len(failures)}): {first.kind}{also}", first.traceback
    )
