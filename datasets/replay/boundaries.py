"""Model and route boundaries: recorded ``model`` and ``route`` steps served back by occurrence,
and the live implementations a cut-point replay sends chosen boundaries to.

``tools.llm.complete(messages, **params)`` returns the nth recorded model step as a
``ModelResponse`` (content, tokens, finish reason); ``tools.route(name, payload)`` the nth
recorded decision of that route. A recorded failure is re-raised (``ToolCallError``); a call past
the recorded ones raises ``FixtureMismatch``: the recording has fewer calls of that boundary than
the agent makes, so the fixture needs re-recording (or the boundary run live). A full replay
therefore makes zero model calls.

Live implementations are registered by name (``register_live("llm")(fn)`` in the agent's module,
so worker processes register them too on import) and chosen per run (``--live llm,kb_search``):
``"llm"`` or a recorded model name takes the model calls (``fn(messages, **params)``), a route
name its decisions (``fn(payload)``), a read tool's name its calls (``fn(arguments)``). Writes
are never live: the sandbox takes them whatever ``--live`` says.

An implementation may be ``async def``: an ``async def`` agent's awaited calls
(``tools.acall``, ``tools.llm.acomplete``, ``tools.aroute``) await it on the agent's own event
loop; a plain agent's calls run it to completion on one event loop per thread (``settle``), kept
across calls so a client bound to its loop keeps working. An async agent that calls an async
implementation without awaiting (``tools.call``) is a usage error: its loop is busy running it.
"""

from __future__ import annotations

import asyncio
import atexit
import difflib
import inspect
import operator
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from golden_distill.datasets.case import Step
from golden_distill.datasets.replay.agent_call import AgentUsageError
from golden_distill.datasets.replay.contract import ToolCallError, parse_json

#: The boundaries other than tools (``tools.llm``, ``tools.route``).
BOUNDARY_KINDS = ("model", "route")
#: The name that sends every model call to a live implementation.
LLM = "llm"
#: Live implementations by name (``register_live``).
LIVE_IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {}
_seq = operator.attrgetter("seq")


class FixtureMismatch(ToolCallError):
    """The agent called a boundary more often than the recording did."""

    def __init__(self, kind: str, name: str, recorded: int) -> None:
        super().__init__(
            name, "error",
            f"{kind} boundary {name!r} called more than the {recorded} recorded time(s): "
            "the fixture needs re-recording (or run this boundary --live)",
        )  # fmt: skip
        self.kind = kind
        self.recorded = recorded


class LiveError(ValueError):
    """``--live`` names something that cannot run live (a usage error)."""


def register_live(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``fn`` is the live implementation of boundary ``name``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        LIVE_IMPLEMENTATIONS[name] = fn
        return fn

    return register


def resolve_live(names: Iterable[str]) -> dict[str, Callable[..., Any]]:
    """The registered implementations of ``names`` (``LiveError`` with a suggestion for a name
    nobody registered)."""
    out: dict[str, Callable[..., Any]] = {}
    for name in names:
        if name not in LIVE_IMPLEMENTATIONS:
            known = sorted(LIVE_IMPLEMENTATIONS)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            listed = ", ".join(known) or "none (register_live(name) in the agent's module)"
            raise LiveError(f"--live {name!r}: no live implementation registered{hint} "
                            f"(registered: {listed})")  # fmt: skip
        out[name] = LIVE_IMPLEMENTATIONS[name]
    return out


_LOOPS = threading.local()


def settle(answer: Any, name: str) -> Any:
    """A live implementation's answer for a plain (not awaited) call: an awaitable one (an
    ``async def`` implementation) run to completion on this thread's event loop."""
    if not inspect.isawaitable(answer):
        return answer
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = getattr(_LOOPS, "loop", None)
        if loop is None or loop.is_closed():
            loop = _LOOPS.loop = asyncio.new_event_loop()
            atexit.register(loop.close)
        return loop.run_until_complete(answer)
    if inspect.iscoroutine(answer):
        answer.close()  # never awaited: closed so Python does not warn about it
    raise AgentUsageError(
        f"live {name!r} is async and the agent runs on an event loop: await the call "
        "(`await tools.acall(...)`, `await tools.llm.acomplete(...)`, `await tools.aroute(...)`)"
    )


async def awaited(answer: Any) -> Any:
    """A live implementation's answer for an awaited call (awaited when it is awaitable)."""
    return await answer if inspect.isawaitable(answer) else answer


@dataclass(slots=True)
class ModelResponse:
    """One model call's answer, as recorded (or as the live implementation gave it)."""

    content: Any
    tokens: int | None = None
    finish_reason: str | None = None
    raw: Any = None


@dataclass(slots=True)
class BoundaryCall:
    """One model or route call the agent made."""

    kind: str  # model | route
    name: str
    occurrence: int  # 1-based, per name
    recorded_seq: int | None  # None: live, or past the recording
    live: bool = False
    tokens: int | None = None
    error: str | None = None


def model_response(step: Step) -> ModelResponse:
    """The recorded step as a ``ModelResponse``: an OpenAI-style response (``choices``), an
    object with ``content``/``text``, or plain text."""
    raw = parse_json(step.response)
    content, finish = raw, None
    if isinstance(raw, dict):
        choices = raw.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            first = choices[0]
            message = first.get("message") or {}
            content = message.get("content") if isinstance(message, dict) else message
            finish = first.get("finish_reason")
        else:
            content = raw.get("content", raw.get("text", raw))
            finish = raw.get("finish_reason") or raw.get("stop_reason")
    tokens = step.tokens
    if tokens is None and isinstance(raw, dict) and isinstance(raw.get("usage"), dict):
        tokens = raw["usage"].get("total_tokens")
    return ModelResponse(content, tokens, finish, raw)


@dataclass(slots=True)
class _Recorded:
    """Steps of one kind by name, and which were served (pointers: O(1) per call)."""

    kind: str
    steps: list[Step]
    by_name: dict[str, list[Step]] = field(default_factory=dict)
    taken: set[int] = field(default_factory=set)
    log: list[BoundaryCall] = field(default_factory=list)
    made: dict[str, int] = field(default_factory=dict)  # calls per name, live ones included
    _next: int = 0  # the first step of ``steps`` perhaps not yet served
    _next_of: dict[str, int] = field(default_factory=dict)  # the same, per name

    def __post_init__(self) -> None:
        for step in self.steps:
            self.by_name.setdefault(step.name, []).append(step)

    def upcoming(self) -> Step | None:
        """The next unserved step in recorded order."""
        steps, taken, i = self.steps, self.taken, self._next
        while i < len(steps) and steps[i].seq in taken:
            i += 1
        self._next = i
        return steps[i] if i < len(steps) else None

    def _upcoming_of(self, name: str) -> Step | None:
        steps, taken = self.by_name.get(name, []), self.taken
        i = self._next_of.get(name, 0)
        while i < len(steps) and steps[i].seq in taken:
            i += 1
        self._next_of[name] = i
        return steps[i] if i < len(steps) else None

    def next(self, name: str | None) -> Step:
        """The next unserved step of ``name`` (None: of any name, in recorded order)."""
        step = self.upcoming() if name is None else self._upcoming_of(name)
        label = step.name if step is not None else name or (
            self.steps[-1].name if self.steps else LLM
        )  # fmt: skip
        n = self.made[label] = self.made.get(label, 0) + 1
        if step is None:
            pool = self.steps if name is None else self.by_name.get(name, [])
            self.log.append(BoundaryCall(self.kind, label, n, None, error="fixture mismatch"))
            raise FixtureMismatch(self.kind, label, len(pool))
        self.taken.add(step.seq)
        failed = step.status != "ok"
        error = (step.error or step.status) if failed else None
        self.log.append(BoundaryCall(self.kind, step.name, n, step.seq, tokens=step.tokens,
                                     error=error))  # fmt: skip
        if failed:
            raise ToolCallError(step.name, step.status, step.error)
        return step

    def live(self, name: str, tokens: int | None = None) -> None:
        n = self.made[name] = self.made.get(name, 0) + 1
        self.log.append(BoundaryCall(self.kind, name, n, None, live=True, tokens=tokens))


class ModelStub:
    """``llm``: recorded model steps served in order (by model name when the agent names a
    recorded one), or a live implementation."""

    def __init__(self, steps: Iterable[Step], live: Mapping[str, Callable[..., Any]]) -> None:
        self.recorded = _Recorded("model", sorted([s for s in steps if s.kind == "model"],
                                                  key=_seq))  # fmt: skip
        self.live = live

    @property
    def log(self) -> list[BoundaryCall]:
        return self.recorded.log

    def _live_impl(self, params: dict[str, Any]) -> tuple[Callable[..., Any], str] | None:
        """The live implementation of this call and its label (None: served as recorded)."""
        if not self.live:
            return None
        model = params.get("model")
        named = model if isinstance(model, str) and model in self.recorded.by_name else None
        step = self.recorded.upcoming()
        upcoming = named or (step.name if step is not None else None)
        impl = self.live.get(upcoming or "") or self.live.get(LLM)
        return None if impl is None else (impl, upcoming or LLM)

    def _recorded(self, params: dict[str, Any]) -> ModelResponse:
        model = params.get("model")
        named = model if isinstance(model, str) and model in self.recorded.by_name else None
        return model_response(self.recorded.next(named))

    def _answered(self, answer: Any, label: str) -> ModelResponse:
        response = answer if isinstance(answer, ModelResponse) else ModelResponse(answer)
        self.recorded.live(label, response.tokens)
        return response

    def complete(self, messages: Any = None, **params: Any) -> ModelResponse:
        """The recorded answer to this call (the nth model call gets the nth model step)."""
        live = self._live_impl(params)
        if live is not None:
            impl, label = live
            return self._answered(settle(impl(messages, **params), label), label)
        return self._recorded(params)

    async def acomplete(self, messages: Any = None, **params: Any) -> ModelResponse:
        """``complete`` for ``async def`` agents (an async live implementation awaited)."""
        live = self._live_impl(params)
        if live is not None:
            impl, label = live
            return self._answered(await awaited(impl(messages, **params)), label)
        return self._recorded(params)


class RouteStub:
    """Recorded ``route`` decisions by name and occurrence, or a live implementation."""

    def __init__(self, steps: Iterable[Step], live: Mapping[str, Callable[..., Any]]) -> None:
        self.recorded = _Recorded("route", sorted([s for s in steps if s.kind == "route"],
                                                  key=_seq))  # fmt: skip
        self.live = live

    @property
    def log(self) -> list[BoundaryCall]:
        return self.recorded.log

    def __call__(self, name: str, payload: Any = None) -> Any:
        impl = self.live.get(name)
        if impl is not None:
            self.recorded.live(name)
            return settle(impl(payload), name)
        return parse_json(self.recorded.next(name).response)

    async def acall(self, name: str, payload: Any = None) -> Any:
        """``__call__`` for ``async def`` agents (an async live implementation awaited)."""
        impl = self.live.get(name)
        if impl is not None:
            self.recorded.live(name)
            return await awaited(impl(payload))
        return parse_json(self.recorded.next(name).response)


class BoundaryStubs:
    """The model and route boundaries of one case's stubs (``stubs.VirtualTools``), built on
    first use: most cases never call them."""

    all_steps: list[Step]
    steps: list[Step]
    live: Mapping[str, Callable[..., Any]]
    _llm: ModelStub | None
    _routes: RouteStub | None

    @property
    def llm(self) -> ModelStub:
        """The model boundary: ``llm.complete(messages, **params)``."""
        if self._llm is None:
            self._llm = ModelStub(self.all_steps, self.live)
        return self._llm

    @property
    def routes(self) -> RouteStub:
        """The route boundary (``route``, ``aroute``)."""
        if self._routes is None:
            self._routes = RouteStub(self.all_steps, self.live)
        return self._routes

    def route(self, name: str, payload: Any = None) -> Any:
        """The recorded decision of route ``name`` (by occurrence), or its live one."""
        return self.routes(name, payload)

    @property
    def model_log(self) -> list[Any]:
        """The model calls made (``BoundaryCall``); empty when the agent never used ``llm``."""
        return self._llm.log if self._llm is not None else []

    @property
    def boundary_log(self) -> list[Any]:
        """Model and route calls made (``BoundaryCall``), model calls first."""
        return [*(self._llm.log if self._llm else ()), *(self._routes.log if self._routes else ())]

    def recorded_boundaries(self) -> list[Step]:
        """The recorded model and route steps (one pass; most cases have none)."""
        if len(self.all_steps) == len(self.steps):  # ``steps``: the tool steps
            return []
        return [s for s in self.all_steps if s.kind in BOUNDARY_KINDS]

    async def aroute(self, name: str, payload: Any = None) -> Any:
        """``route`` for ``async`` agents (an ``async def`` live implementation awaited)."""
        return await self.routes.acall(name, payload)
