"""Exporting canonical cases to evidence tables (files or a SQL database).

For teams that keep agent evidence in SQL or a lake: cases go out as ``session_trace``,
``context_snapshot`` and ``tool_call_trace`` rows with the standard columns filled, plus the
extension columns (``evidence_schema``) that make ``cases -> tables -> cases`` lossless (the case
id travels in ``session_trace.case_id``). Writing streams in batches; SQLite gets
``executemany``, PostgreSQL ``COPY``; files are written as Parquet row groups or CSV blocks.

Targets: a folder, local or fsspec URL (``file_format`` parquet or csv), ``sqlite:///path.db`` or
``postgresql://...``. Tables are created when missing; rows are appended (a trace that already
exists is a primary-key error from the database, and a folder that already holds the tables is
refused: never a silent overwrite).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from fsspec.core import url_to_fs

from golden_distill.datasets.sources.base import SourceError
from golden_distill.datasets.sources.evidence_schema import (
    CALLS,
    SESSION,
    SNAPSHOT,
    TABLES,
    arrow_schema,
    column_names,
    create_table_sql,
)
from golden_distill.datasets.sources.evidence_sql import redact_url, sql_dialect, sqlite_path

_SAMPLING = ("temperature", "top_p", "max_tokens")


def case_to_evidence(case: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """One case row -> its rows per table (no snapshot row when the case has no context)."""
    trace_id = case.get("trace_id") or case["case_id"]
    agent = case.get("agent") or {}
    intent = case.get("intent") or {}
    outcome = case.get("outcome") or {}
    context = case.get("context") or {}
    steps = case.get("steps") or []
    ends = [
        s["started_at"] + timedelta(milliseconds=s.get("latency_ms") or 0)
        for s in steps
        if s.get("started_at") is not None
    ]
    session = {
        "trace_id": trace_id,
        "session_id": case.get("session_id"),
        "user_message": case.get("user_input"),
        "intent_name": intent.get("name"),
        "intent_confidence": intent.get("confidence"),
        "agent_version": agent.get("agent_version"),
        "model_name": agent.get("model_name"),
        "start_time": case.get("recorded_at"),
        "end_time": max(ends) if ends else None,
        "answer_text": outcome.get("answer_text"),
        "status": outcome.get("status"),
        "case_id": case["case_id"],
        "turn_index": case.get("turn_index"),
        "tenant_id": case.get("tenant_id"),
        "user_id": case.get("user_id"),
        "system_prompt_version": agent.get("system_prompt_version"),
        "prompt_variables": agent.get("prompt_variables"),
        "final_state": outcome.get("final_state"),
        "handoff": outcome.get("handoff"),
        "handoff_reason": outcome.get("handoff_reason"),
        "low_confidence": outcome.get("low_confidence"),
        "reward": outcome.get("reward"),
        **_expected_columns(case.get("expected")),
    }
    tables: dict[str, list[dict[str, Any]]] = {SESSION: [session], SNAPSHOT: [], CALLS: []}
    chunks = context.get("retrieved_chunks") or []
    context_values = [context.get(k) for k in ("messages", "memory", "env_versions")]
    context_values += [context.get("baseline_state"), agent.get("model_params")]
    if chunks or any(v is not None for v in context_values):
        snapshot = {
            "snapshot_id": f"{trace_id}#0",
            "trace_id": trace_id,
            "system_prompt": None,
            "context_window": context.get("messages"),
            "memory_keys": context.get("memory"),
            "retrieved_chunks": orjson.dumps(chunks).decode() if chunks else None,
            "model_params": agent.get("model_params"),
            "env_versions": context.get("env_versions"),
            "baseline_state": context.get("baseline_state"),
        }
        snapshot.update(_sampling(agent.get("model_params")))
        tables[SNAPSHOT].append(snapshot)
    for step in steps:
        tables[CALLS].append(
            {
                "call_id": f"{trace_id}#{step['seq']}",
                "trace_id": trace_id,
                "call_seq": step["seq"],
                "tool_name": step["name"],
                "tool_input": step.get("arguments"),
                "tool_output": step.get("response"),
                "tool_status": step.get("status"),
                "latency_ms": step.get("latency_ms"),
                "tokens_used": step.get("tokens"),
                "call_time": step.get("started_at"),
                "parent_seq": step.get("parent_seq"),
                "step_kind": step.get("kind"),
                "is_mutating": step.get("is_mutating"),
                "tool_system": step.get("system"),
                "error_text": step.get("error"),
            }
        )
    return tables


def _expected_columns(expected: dict[str, Any] | None) -> dict[str, Any]:
    if not expected or not expected.get("source"):
        return {}
    return {
        "expected_final_state": expected.get("final_state"),
        "expected_actions": orjson.dumps(expected.get("actions") or []).decode(),
        "expected_answer_facts": orjson.dumps(expected.get("answer_facts") or []).decode(),
        "expected_source": expected.get("source"),
    }


def _sampling(model_params: str | None) -> dict[str, Any]:
    values: dict[str, Any] = dict.fromkeys(_SAMPLING)
    if not model_params:
        return values
    try:
        params = orjson.loads(model_params)
    except orjson.JSONDecodeError:
        return values
    if isinstance(params, dict):
        for key in ("temperature", "top_p"):
            if isinstance(params.get(key), int | float) and not isinstance(params[key], bool):
                values[key] = float(params[key])
        if isinstance(params.get("max_tokens"), int) and not isinstance(params["max_tokens"], bool):
            values["max_tokens"] = params["max_tokens"]
    return values


@dataclass
class EvidenceCounts:
    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))


class EvidenceWriter:
    """Buffers rows per table and flushes every ``batch_rows`` cases."""

    def __init__(
        self, target: str, *, file_format: str = "parquet", batch_rows: int = 2000
    ) -> None:
        if file_format not in ("parquet", "csv"):
            raise ValueError("file_format must be parquet or csv")
        self.target = target
        self.dialect = sql_dialect(target)
        self.file_format = file_format
        self.batch_rows = batch_rows
        self.counts = EvidenceCounts()
        self._buffer: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        self._pending_cases = 0
        self._file_writers: dict[str, Any] = {}
        self._sinks: list[Any] = []
        self._fs: Any = None
        self._root = ""
        self._conn: Any = None
        self._open()

    def _open(self) -> None:
        if self.dialect == "sqlite":
            path = sqlite_path(self.target)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path)
        elif self.dialect == "postgresql":
            # optional: psycopg is needed only for PostgreSQL evidence tables
            import psycopg

            try:
                self._conn = psycopg.connect(self.target.replace("postgres://", "postgresql://", 1))
            except psycopg.Error as exc:
                raise SourceError(
                    f"{redact_url(self.target)}: cannot connect ({type(exc).__name__})"
                ) from None
        else:
            fs, root = url_to_fs(self.target)
            self._fs, self._root = fs, root.rstrip("/")
            if any(fs.exists(self._path(t)) for t in TABLES):
                raise SourceError(
                    f"{redact_url(self.target)}: already holds evidence tables; use an empty folder"
                )
            fs.makedirs(self._root, exist_ok=True)
            return
        for table in TABLES:
            for statement in create_table_sql(table, self.dialect):
                self._conn.execute(statement)
        self._conn.commit()

    def write(self, case: dict[str, Any]) -> None:
        for table, rows in case_to_evidence(case).items():
            self._buffer[table].extend(rows)
        self._pending_cases += 1
        if self._pending_cases >= self.batch_rows:
            self.flush()

    def write_many(self, cases: Iterable[dict[str, Any]]) -> None:
        for case in cases:
            self.write(case)

    def flush(self) -> None:
        for table in TABLES:
            rows = self._buffer[table]
            if rows:
                try:
                    self._flush_table(table, rows)
                except Exception as exc:
                    if not _is_integrity_error(exc):
                        raise
                    if self._conn is not None:
                        self._conn.rollback()
                    raise SourceError(
                        f"{redact_url(self.target)}: {table}: a key is already taken (a trace "
                        "exported before, or two cases with the same trace_id)"
                    ) from None
                self.counts.rows[table] += len(rows)
            self._buffer[table] = []
        self._pending_cases = 0
        if self._conn is not None:
            self._conn.commit()

    def _flush_table(self, table: str, rows: list[dict[str, Any]]) -> None:
        names = column_names(table)
        if self.dialect is None:
            batch = pa.Table.from_pylist(rows, schema=arrow_schema(table))
            writer = self._file_writers.get(table)
            if writer is None:
                sink = self._fs.open(self._path(table), "wb")
                self._sinks.append(sink)
                if self.file_format == "parquet":
                    writer = pq.ParquetWriter(sink, batch.schema, compression="zstd")
                else:
                    writer = pacsv.CSVWriter(sink, batch.schema)
                self._file_writers[table] = writer
            writer.write_table(batch)
            return
        values = [[r.get(n) for n in names] for r in rows]
        if self.dialect == "sqlite":
            values = [_sqlite_values(v) for v in values]
            marks = ", ".join("?" * len(names))
            self._conn.executemany(
                f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})", values
            )
            return
        with (
            self._conn.cursor() as cur,
            cur.copy(f"COPY {table} ({', '.join(names)}) FROM STDIN") as copy,
        ):
            for value in values:
                copy.write_row(value)

    def close(self) -> EvidenceCounts:
        """Flush what is buffered, then release files and the connection (always)."""
        try:
            self.flush()
        finally:
            self._release()
        return self.counts

    def abort(self) -> None:
        """Drop what is buffered and not yet committed; release files and the connection."""
        self._buffer = {t: [] for t in TABLES}
        if self._conn is not None:
            self._conn.rollback()
        self._release()

    def _path(self, table: str) -> str:
        return f"{self._root}/{table}.{self.file_format}"

    def _release(self) -> None:
        for writer in self._file_writers.values():
            writer.close()
        for sink in self._sinks:
            sink.close()
        self._file_writers, self._sinks = {}, []
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> EvidenceWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _is_integrity_error(exc: Exception) -> bool:
    if isinstance(exc, sqlite3.IntegrityError):
        return True
    try:
        # optional: psycopg is needed only for PostgreSQL evidence tables
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return False
    return isinstance(exc, psycopg.errors.IntegrityError)


def _sqlite_values(values: list[Any]) -> list[Any]:
    """SQLite has no timestamp type: datetimes are stored as ISO-8601 text (UTC)."""
    return [v.isoformat() if isinstance(v, datetime) else v for v in values]


def export_evidence(
    cases: Iterable[dict[str, Any]], target: str, *, file_format: str = "parquet"
) -> EvidenceCounts:
    """Write ``cases`` (CASE_SCHEMA rows) to evidence tables at ``target``."""
    with EvidenceWriter(target, file_format=file_format) as writer:
        writer.write_many(cases)
    return writer.counts
