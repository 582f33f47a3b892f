"""One trace's evidence rows (session, snapshots, calls) -> one canonical case row.

Shared by the SQL and the file readers, which only differ in how they fetch a trace's rows. Rows
are dicts by column name; a column the source lacks is simply absent. Pure: raises
``RecordProblem`` for a trace that cannot be a case (a NULL in a required column of one of its
calls, unreadable JSON in a snapshot).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import orjson

from golden_distill.datasets.quarantine import INVALID_JSON, NULL_REQUIRED
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.case_rows import (
    MALFORMED_ARGUMENTS,
    RecordProblem,
    StepFinisher,
    expected_row,
    json_text,
    new_case_row,
    new_step,
    set_arguments,
    to_utc,
)

_OK = {"ok", "success", "succeeded", "completed", "complete", "done", "200"}
_TIMEOUT = {"timeout", "timed_out", "timedout", "deadline_exceeded"}
_SAMPLING = ("temperature", "top_p", "max_tokens")


def step_status(value: Any) -> str:
    """ok | error | timeout from a free-form status column (NULL means ok)."""
    if value is None:
        return "ok"
    text = str(value).strip().lower()
    if text in _OK:
        return "ok"
    return "timeout" if text in _TIMEOUT else "error"


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "t", "yes")
    return bool(value)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


class EvidenceAssembler:
    def __init__(
        self, finisher: StepFinisher, *, keep_malformed: bool = False, python_literals: bool = False
    ) -> None:
        self.finisher = finisher
        self.keep_malformed = keep_malformed
        self.python_literals = python_literals

    def assemble(
        self,
        uri: str,
        position: int,
        session: dict[str, Any],
        snapshots: Sequence[dict[str, Any]],
        calls: Sequence[dict[str, Any]],
    ) -> dict[str, Any]:
        trace_id = str(session["trace_id"])
        case_id = _str(session.get("case_id")) or make_case_id("evidence", trace_id)
        row = new_case_row(case_id, "evidence", uri, position, trace_id)
        row["trace_id"] = trace_id
        for name in ("session_id", "tenant_id", "user_id"):
            row[name] = _str(session.get(name))
        row["turn_index"] = _int(session.get("turn_index"))
        row["recorded_at"] = to_utc(session.get("start_time"))
        row["user_input"] = _str(session.get("user_message"))
        row["intent"] = {
            "name": _str(session.get("intent_name")),
            "confidence": _float(session.get("intent_confidence")),
        }
        agent = row["agent"]
        agent["agent_version"] = _str(session.get("agent_version"))
        agent["model_name"] = _str(session.get("model_name"))
        agent["system_prompt_version"] = _str(session.get("system_prompt_version"))
        agent["prompt_variables"] = _str(session.get("prompt_variables"))
        outcome = row["outcome"]
        outcome["answer_text"] = _str(session.get("answer_text"))
        outcome["status"] = _str(session.get("status"))
        outcome["final_state"] = _str(session.get("final_state"))
        outcome["handoff"] = _bool(session.get("handoff"))
        outcome["handoff_reason"] = _str(session.get("handoff_reason"))
        outcome["low_confidence"] = _bool(session.get("low_confidence"))
        outcome["reward"] = _float(session.get("reward"))
        row["expected"] = _expected(session)
        if snapshots:
            first = min(snapshots, key=lambda s: str(s.get("snapshot_id") or ""))
            self._snapshot(row, first)
        ordered = sorted(
            calls, key=lambda c: c["call_seq"] if c.get("call_seq") is not None else -1
        )
        row["steps"] = [self._step(call) for call in ordered]
        # A column the table has is what the source recorded (NULL = recorded unknown).
        recorded = {"kind"}
        if calls and "is_mutating" in calls[0]:
            recorded.add("is_mutating")
        if calls and "tool_system" in calls[0]:
            recorded.add("system")
        if "handoff" in session:
            recorded.add("handoff")
        self.finisher.finish(row, recorded=recorded)
        return row

    def _snapshot(self, row: dict[str, Any], snap: dict[str, Any]) -> None:
        agent, context = row["agent"], row["context"]
        prompt = snap.get("system_prompt")
        if agent["system_prompt_version"] is None and prompt:
            agent["system_prompt_version"] = "sha256:" + hashlib.sha256(prompt.encode()).hexdigest()
        params = _str(snap.get("model_params"))
        if params is None:
            sampling = {k: snap.get(k) for k in _SAMPLING if snap.get(k) is not None}
            params = orjson.dumps(sampling).decode() if sampling else None
        agent["model_params"] = params
        context["messages"] = _str(snap.get("context_window"))
        context["memory"] = _str(snap.get("memory_keys"))
        context["env_versions"] = _str(snap.get("env_versions"))
        context["baseline_state"] = _str(snap.get("baseline_state"))
        chunks = snap.get("retrieved_chunks")
        if chunks:
            context["retrieved_chunks"] = _chunks(chunks, snap.get("snapshot_id"))

    def _step(self, call: dict[str, Any]) -> dict[str, Any]:
        for name in ("call_seq", "tool_name"):
            if call.get(name) is None:
                raise RecordProblem(
                    NULL_REQUIRED, f"tool_call_trace call_id={call.get('call_id')}: {name} is NULL"
                )
        name = str(call["tool_name"])
        kind = _str(call.get("step_kind")) or (
            "handoff" if self.finisher.is_handoff(name) else "tool"
        )
        step = new_step(int(call["call_seq"]), kind, name)
        verdict = set_arguments(
            step,
            call.get("tool_input"),
            keep_malformed=self.keep_malformed,
            python_literals=self.python_literals,
        )
        if verdict == "malformed":
            raise RecordProblem(
                MALFORMED_ARGUMENTS, f"tool_call_trace call_id={call.get('call_id')}: tool_input"
            )
        step["response"] = json_text(call.get("tool_output"))
        step["status"] = step_status(call.get("tool_status"))
        step["error"] = _str(call.get("error_text"))
        step["parent_seq"] = _int(call.get("parent_seq"))
        step["is_mutating"] = _bool(call.get("is_mutating"))
        step["system"] = _str(call.get("tool_system"))
        step["latency_ms"] = _int(call.get("latency_ms"))
        step["tokens"] = _int(call.get("tokens_used"))
        step["started_at"] = to_utc(call.get("call_time"))
        return step


def _json_list(session: dict[str, Any], column: str) -> list[Any]:
    value = session.get(column)
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise RecordProblem(
                INVALID_JSON, f"session_trace trace_id={session['trace_id']}: {column} is not JSON"
            ) from None
    if not isinstance(value, list):
        raise RecordProblem(
            INVALID_JSON, f"session_trace trace_id={session['trace_id']}: {column} is not a list"
        )
    return value


def _expected(session: dict[str, Any]) -> dict[str, Any] | None:
    """The expected outcome: the ``expected_*`` columns when the table has them, else the
    session's end-state column (``final_state``) as the expected final state."""
    if not any(k.startswith("expected_") for k in session):
        return expected_row("evidence", _str(session.get("final_state")))
    actions = []
    for i, action in enumerate(_json_list(session, "expected_actions")):
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            raise RecordProblem(
                INVALID_JSON,
                f"session_trace trace_id={session['trace_id']}: expected_actions[{i}] has no name",
            )
        args = action.get("arguments")
        try:
            actions.append((action["name"], orjson.loads(args) if isinstance(args, str) else args))
        except orjson.JSONDecodeError:
            raise RecordProblem(
                INVALID_JSON,
                f"session_trace trace_id={session['trace_id']}: expected_actions[{i}] arguments",
            ) from None
    source = _str(session.get("expected_source"))
    return expected_row(
        source or "evidence",
        _str(session.get("expected_final_state")),
        actions,
        [str(f) for f in _json_list(session, "expected_answer_facts")],
        keep_empty=source is not None,
    )


def _chunks(value: Any, snapshot_id: Any) -> list[dict[str, Any]]:
    """Retrieved chunks from JSON text (or an already-parsed list)."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise RecordProblem(
                INVALID_JSON, f"context_snapshot {snapshot_id}: retrieved_chunks is not JSON"
            ) from None
    if not isinstance(value, list):
        raise RecordProblem(
            INVALID_JSON, f"context_snapshot {snapshot_id}: retrieved_chunks is not a list"
        )
    chunks = []
    for item in value:
        if isinstance(item, dict):
            chunks.append(
                {
                    "text": _str(item.get("text")),
                    "index_snapshot_id": _str(
                        item.get("index_snapshot_id", item.get("indexSnapshotId"))
                    ),
                    "query": _str(item.get("query")),
                }
            )
        else:
            chunks.append({"text": _str(item), "index_snapshot_id": None, "query": None})
    return chunks
