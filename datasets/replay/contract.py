"""The agent contract: what a replayed agent receives, what it may call, what it returns.

An agent under test is any callable ``agent(case: ReplayInput, tools: ToolStub) -> AgentResult``,
plain or ``async def``. It reads the case (user input, context, recorded time, intent, its own
identity), calls tools only through ``tools.call(name, arguments)`` (``await tools.acall(...)``
in an async agent; served from the recording, never a live system), its model through
``tools.llm.complete(messages, **params)`` and routes through ``tools.route(name, payload)``
(the recorded steps, by occurrence), and returns an ``AgentResult``. A recorded failure comes
back as ``ToolCallError`` carrying the recorded error; a tool the recording never called raises
``StubEscape`` (a ``ToolCallError``, so an agent that handles tool failures carries on) and is
reported. Returning anything but an ``AgentResult`` is a usage error, not a regression.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import orjson

from golden_distill.datasets.case import Case


class ToolCallError(Exception):
    """A tool call that failed in the recording: ``status`` (error|timeout) and the recorded
    ``error`` (text or JSON text), re-raised inside the agent exactly as recorded."""

    def __init__(self, tool: str, status: str, error: str | None) -> None:
        super().__init__(f"{tool}: recorded {status}" + (f": {error}" if error else ""))
        self.tool = tool
        self.status = status
        self.error = error


class StubEscape(ToolCallError):
    """The agent called a tool the recording never called: nothing is executed, it is reported."""

    def __init__(self, tool: str) -> None:
        super().__init__(tool, "error", f"no recording of tool {tool!r}: stub escape")


@dataclass(frozen=True, slots=True)
class BaselineCall:
    """One recorded call, as the re-issuing agent (and a curious test) sees it."""

    seq: int
    name: str
    arguments: Any  # parsed JSON
    is_write: bool
    kind: str = "tool"  # tool | handoff | model | route


@dataclass(frozen=True, slots=True)
class ReplayInput:
    """Everything the agent may know about the case it replays."""

    case_id: str
    user_input: str | None
    messages: list[Any]
    memory: Any
    retrieved_chunks: list[dict[str, Any]]
    baseline_state: Any
    recorded_at: datetime | None
    intent: str | None
    agent_version: str | None
    model_name: str | None
    system_prompt_version: str | None
    #: The recorded tool calls in order. A real agent ignores them; the re-issuing agent used
    #: to measure the harness (and tests) replays them.
    baseline_calls: tuple[BaselineCall, ...] = ()
    #: The recorded final state and answer (same purpose as ``baseline_calls``).
    recorded_final_state: str | None = None
    recorded_answer: str | None = None
    #: The recorded model and route steps in order (same purpose as ``baseline_calls``).
    baseline_boundaries: tuple[BaselineCall, ...] = ()

    @classmethod
    def from_case(
        cls,
        case: Case,
        calls: tuple[BaselineCall, ...],
        boundaries: tuple[BaselineCall, ...] = (),
    ) -> ReplayInput:
        context = case.context
        expected = case.expected.final_state if case.expected else None
        return cls(
            case_id=case.case_id,
            user_input=case.user_input,
            messages=parse_json(context.messages) or [],
            memory=parse_json(context.memory),
            retrieved_chunks=[
                {"text": c.text, "index_snapshot_id": c.index_snapshot_id, "query": c.query}
                for c in context.retrieved_chunks
            ],
            baseline_state=parse_json(context.baseline_state),
            recorded_at=case.recorded_at,
            intent=case.intent.name,
            agent_version=case.agent.agent_version,
            model_name=case.agent.model_name,
            system_prompt_version=case.agent.system_prompt_version,
            baseline_calls=calls,
            recorded_final_state=case.outcome.final_state or expected,
            recorded_answer=case.outcome.answer_text,
            baseline_boundaries=boundaries,
        )


@dataclass(slots=True)
class AgentResult:
    """What the agent ended with."""

    final_state: str | None = None
    answer: str | None = None
    intent: str | None = None
    tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ToolStub(Protocol):
    """What the agent calls its boundaries through (``stubs.VirtualTools``)."""

    def call(self, name: str, arguments: Any = None) -> Any:
        """The recorded response (parsed JSON) or ``ToolCallError``."""
        ...

    async def acall(self, name: str, arguments: Any = None) -> Any:
        """``call`` for ``async def`` agents."""
        ...

    @property
    def llm(self) -> Any:
        """The model: ``llm.complete(messages, **params) -> ModelResponse``."""
        ...

    def route(self, name: str, payload: Any = None) -> Any:
        """The recorded decision of route ``name``."""
        ...

    async def aroute(self, name: str, payload: Any = None) -> Any:
        """``route`` for ``async def`` agents."""
        ...


class Agent(Protocol):
    def __call__(self, case: ReplayInput, tools: ToolStub) -> AgentResult: ...


def parse_json(text: str | None) -> Any:
    """A recorded JSON text as a value; text that is not JSON stays text (recordings hold both)."""
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
