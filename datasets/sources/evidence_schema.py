"""The evidence tables: their columns, Arrow schemas and SQL DDL, shared by reader and writer.

Teams that keep agent evidence in SQL or a data lake use three tables: ``session_trace`` (one row
per run), ``context_snapshot`` (what the model saw: prompt, window, sampling parameters, memory,
retrieved chunks; optional per run) and ``tool_call_trace`` (one row per tool call). The
*standard* columns are what such teams already have. The *extension* columns carry the rest of a
canonical case (tenant, write flags, reward...) so that cases exported by golden-distill read back
equal; the reader uses them when present and works without them.

Column kinds: ``text``, ``float``, ``int``, ``bool``, ``ts`` (UTC timestamp).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

SESSION = "session_trace"
SNAPSHOT = "context_snapshot"
CALLS = "tool_call_trace"
TABLES = (SESSION, SNAPSHOT, CALLS)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: str
    required: bool = False
    extension: bool = False


def _ext(name: str, kind: str) -> Column:
    return Column(name, kind, extension=True)


COLUMNS: dict[str, tuple[Column, ...]] = {
    SESSION: (
        Column("trace_id", "text", required=True),
        Column("session_id", "text"),
        Column("user_message", "text"),
        Column("intent_name", "text"),
        Column("intent_confidence", "float"),
        Column("agent_version", "text"),
        Column("model_name", "text"),
        Column("start_time", "ts"),
        Column("end_time", "ts"),
        Column("answer_text", "text"),
        Column("status", "text"),
        _ext("case_id", "text"),
        _ext("turn_index", "int"),
        _ext("tenant_id", "text"),
        _ext("user_id", "text"),
        _ext("system_prompt_version", "text"),
        _ext("prompt_variables", "text"),
        _ext("final_state", "text"),
        _ext("handoff", "bool"),
        _ext("handoff_reason", "text"),
        _ext("low_confidence", "bool"),
        _ext("reward", "float"),
        _ext("expected_final_state", "text"),
        _ext("expected_actions", "text"),  # JSON list of {name, arguments (canonical JSON)}
        _ext("expected_answer_facts", "text"),  # JSON list of strings
        _ext("expected_source", "text"),
    ),
    SNAPSHOT: (
        Column("snapshot_id", "text"),
        Column("trace_id", "text", required=True),
        Column("system_prompt", "text"),
        Column("context_window", "text"),  # JSON text: the messages in the model's window
        Column("temperature", "float"),
        Column("top_p", "float"),
        Column("max_tokens", "int"),
        Column("memory_keys", "text"),  # JSON text: the agent memory (keys and values)
        Column("retrieved_chunks", "text"),  # JSON list of {text, index_snapshot_id, query}
        _ext("model_params", "text"),
        _ext("env_versions", "text"),
        _ext("baseline_state", "text"),
    ),
    CALLS: (
        Column("call_id", "text"),
        Column("trace_id", "text", required=True),
        Column("call_seq", "int", required=True),
        Column("tool_name", "text", required=True),
        Column("tool_input", "text"),
        Column("tool_output", "text"),
        Column("tool_status", "text"),
        Column("latency_ms", "int"),
        Column("tokens_used", "int"),
        Column("call_time", "ts"),
        _ext("parent_seq", "int"),
        _ext("step_kind", "text"),
        _ext("is_mutating", "bool"),
        _ext("tool_system", "text"),
        _ext("error_text", "text"),
    ),
}

#: Key column of each table, for primary keys and keyset paging.
KEYS = {SESSION: "trace_id", SNAPSHOT: "snapshot_id", CALLS: "call_id"}

_ARROW = {
    "text": pa.string(),
    "float": pa.float64(),
    "int": pa.int64(),
    "bool": pa.bool_(),
    "ts": pa.timestamp("ms", tz="UTC"),
}
_SQLITE = {"text": "TEXT", "float": "REAL", "int": "INTEGER", "bool": "INTEGER", "ts": "TEXT"}
_POSTGRES = {
    "text": "TEXT",
    "float": "DOUBLE PRECISION",
    "int": "BIGINT",
    "bool": "BOOLEAN",
    "ts": "TIMESTAMPTZ",
}


def column_names(table: str) -> list[str]:
    return [c.name for c in COLUMNS[table]]


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([pa.field(c.name, _ARROW[c.kind]) for c in COLUMNS[table]])


def kinds(table: str) -> dict[str, str]:
    return {c.name: c.kind for c in COLUMNS[table]}


def required_columns(table: str) -> list[str]:
    return [c.name for c in COLUMNS[table] if c.required]


def create_table_sql(table: str, dialect: str) -> list[str]:
    """CREATE TABLE / INDEX statements (IF NOT EXISTS) for ``dialect`` sqlite or postgresql."""
    types = _SQLITE if dialect == "sqlite" else _POSTGRES
    key = KEYS[table]
    cols = []
    for column in COLUMNS[table]:
        spec = f"{column.name} {types[column.kind]}"
        if column.name == key:
            spec += " PRIMARY KEY"
        elif column.required:
            spec += " NOT NULL"
        cols.append(spec)
    statements = [f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(cols)})"]
    if table == CALLS:
        statements.append(
            f"CREATE INDEX IF NOT EXISTS {table}_trace ON {table} (trace_id, call_seq)"
        )
    elif table == SNAPSHOT:
        statements.append(f"CREATE INDEX IF NOT EXISTS {table}_trace ON {table} (trace_id)")
    return statements


@dataclass(slots=True)
class TraceRows:
    """Everything the tables hold for one trace, as read (rows are dicts by column name)."""

    position: int  # 1-based, in the order traces are read
    session: dict[str, Any]
    snapshots: list[dict[str, Any]]
    calls: list[dict[str, Any]]


@dataclass(slots=True)
class RowProblem:
    """A row that belongs to no readable trace (orphan call, NULL key...), for the quarantine."""

    table: str
    reason: str
    detail: str  # names table, ids and columns only
    row: dict[str, Any]
    position: int | None = None


#: Quarantine reasons specific to evidence tables.
DUPLICATE_TRACE = "duplicate_trace"
ORPHAN_SNAPSHOT = "orphan_snapshot"


@dataclass(slots=True)
class TracePairer:
    """Pairs each session row with its trace's snapshots and calls, in read order.

    Shared by the file and SQL readers. ``position`` and the last trace id carry over between
    calls (pages, buckets); a trace id read twice in a row is a ``duplicate_trace`` problem. Rows
    are *popped* from ``snapshots``/``calls``, so what is left afterwards has no session (orphans).
    """

    position: int = 0
    last_id: str | None = None

    def pair(
        self,
        sessions: list[dict[str, Any]],
        snapshots: dict[str, list[dict[str, Any]]],
        calls: dict[str, list[dict[str, Any]]],
    ) -> Iterator[TraceRows | RowProblem]:
        for session in sessions:
            trace_id = str(session["trace_id"])
            self.position += 1
            if trace_id == self.last_id:
                detail = f"{SESSION}: trace_id={trace_id} appears more than once"
                yield RowProblem(SESSION, DUPLICATE_TRACE, detail, session, self.position)
                continue
            self.last_id = trace_id
            yield TraceRows(
                self.position, session, snapshots.pop(trace_id, []), calls.pop(trace_id, [])
            )
