"""A typed Python view of one canonical case, for code that handles cases one at a time.

Bulk work goes through Arrow/polars on ``CASE_SCHEMA``; adapters, redaction and the replay reader
handle single cases, and these dataclasses give them names and types instead of nested dicts.
``Case.from_row`` / ``Case.to_row`` convert to and from the plain dicts that
``pyarrow.Table.to_pylist`` / ``from_pylist`` use, so a round trip through Parquet is lossless.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any, Self


@dataclass(slots=True)
class Step:
    """One step of a run: a model call, a tool call, a routing decision or a hand-off."""

    seq: int
    kind: str  # one of schema.STEP_KINDS
    name: str
    occurrence: int  # 1-based: the nth call of this `name` in the run
    status: str = "ok"  # one of schema.STEP_STATUSES
    parent_seq: int | None = None
    arguments: str | None = None  # JSON text, exactly as recorded
    canonical_args_sha256: str | None = None
    response: str | None = None  # JSON text, exactly as recorded
    error: str | None = None
    is_mutating: bool | None = None
    system: str | None = None
    latency_ms: int | None = None
    tokens: int | None = None
    started_at: datetime | None = None


@dataclass(slots=True)
class Agent:
    agent_version: str | None = None
    model_name: str | None = None
    model_params: str | None = None  # JSON text
    system_prompt_version: str | None = None
    prompt_variables: str | None = None  # JSON text


@dataclass(slots=True)
class Intent:
    name: str | None = None
    confidence: float | None = None


@dataclass(slots=True)
class Chunk:
    text: str | None = None
    index_snapshot_id: str | None = None
    query: str | None = None


@dataclass(slots=True)
class Context:
    messages: str | None = None  # JSON text
    memory: str | None = None  # JSON text
    retrieved_chunks: list[Chunk] = field(default_factory=list)
    env_versions: str | None = None  # JSON text
    baseline_state: str | None = None  # JSON text


@dataclass(slots=True)
class Outcome:
    answer_text: str | None = None
    final_state: str | None = None
    status: str | None = None
    handoff: bool | None = None
    handoff_reason: str | None = None
    low_confidence: bool | None = None
    reward: float | None = None


@dataclass(slots=True)
class Source:
    format: str | None = None
    uri: str | None = None
    position: int | None = None
    source_record_id: str | None = None


@dataclass(slots=True)
class ExpectedAction:
    name: str | None = None
    arguments: str | None = None  # canonical JSON text


@dataclass(slots=True)
class Expected:
    """What a replay of the case should end with (``schema.EXPECTED_TYPE``)."""

    final_state: str | None = None
    actions: list[ExpectedAction] = field(default_factory=list)
    answer_facts: list[str] = field(default_factory=list)
    source: str | None = None  # one of schema.EXPECTED_SOURCES


@dataclass(slots=True)
class Case:
    """One agent run in canonical form; pipeline fields stay ``None`` until a step sets them."""

    case_id: str
    trace_id: str | None = None
    session_id: str | None = None
    turn_index: int | None = None
    tenant_id: str | None = None
    user_id: str | None = None
    recorded_at: datetime | None = None
    agent: Agent = field(default_factory=Agent)
    user_input: str | None = None
    intent: Intent = field(default_factory=Intent)
    context: Context = field(default_factory=Context)
    steps: list[Step] = field(default_factory=list)
    outcome: Outcome = field(default_factory=Outcome)
    source: Source = field(default_factory=Source)
    expected: Expected | None = None  # since schema 1.1; None when the source has none
    # added by the pipeline
    funnels: list[str] | None = None
    funnel_reasons: str | None = None  # JSON text
    value_score: float | None = None
    cluster_id: str | None = None
    cluster_size: int | None = None
    redaction: str | None = None  # JSON text
    split: str | None = None  # dev | regression | holdout
    trust: str | None = None  # unconfirmed | oracle | human
    task_id: str | None = None  # the source's task id, pseudonymised (schema 1.2)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        """Build from a ``to_pylist()`` row of CASE_SCHEMA or GOLDEN_SCHEMA."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in known}
        values["agent"] = Agent(**(row.get("agent") or {}))
        values["intent"] = Intent(**(row.get("intent") or {}))
        ctx = dict(row.get("context") or {})
        ctx["retrieved_chunks"] = [Chunk(**c) for c in ctx.get("retrieved_chunks") or []]
        values["context"] = Context(**ctx)
        values["steps"] = [Step(**s) for s in row.get("steps") or []]
        values["outcome"] = Outcome(**(row.get("outcome") or {}))
        values["source"] = Source(**(row.get("source") or {}))
        expected = values["expected"] = row.get("expected")
        if expected and expected.get("source"):  # a struct of nulls: no expectation
            actions = [ExpectedAction(**a) for a in expected.get("actions") or []]
            values["expected"] = Expected(
                final_state=expected.get("final_state"),
                actions=actions,
                answer_facts=list(expected.get("answer_facts") or []),
                source=expected.get("source"),
            )
        else:
            values["expected"] = None
        return cls(**values)

    def to_row(self, *, pipeline_fields: bool = False) -> dict[str, Any]:
        """A plain dict for ``pyarrow.Table.from_pylist(schema=...)``."""
        row = asdict(self)
        if not pipeline_fields:
            for name in ("funnels", "funnel_reasons", "value_score", "cluster_id"):
                row.pop(name)
            for name in ("cluster_size", "redaction", "split", "trust", "task_id"):
                row.pop(name)
        return row
