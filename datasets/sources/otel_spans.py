"""OTLP JSON spans -> typed spans -> one canonical case per trace (OpenTelemetry GenAI conventions).

A span's operation is ``gen_ai.operation.name`` (else the first word of its name). One trace is one
case: the ``invoke_agent`` span is the run (its model, messages, status); ``execute_tool`` spans
are tool steps and ``chat`` (or other inference) spans are model steps, ordered by start time.
Attributes the conventions leave optional may be missing; a trace with no run span is still a
case built from its steps. Pure: no I/O; ``RecordProblem`` for a span that cannot be used.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from golden_distill.datasets.quarantine import NO_TRACE_ID, WRONG_TYPE
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.case_rows import (
    MALFORMED_ARGUMENTS,
    RecordProblem,
    StepFinisher,
    json_text,
    new_case_row,
    new_step,
    set_arguments,
)

RUN_OPS = ("invoke_agent",)
TOOL_OPS = ("execute_tool",)
MODEL_OPS = ("chat", "text_completion", "generate_content")
_ERROR_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")
_OK_CODES = (1, "1", "STATUS_CODE_OK", "OK")


def any_value(value: Any) -> Any:
    """Decode an OTLP ``AnyValue`` (``{"stringValue": ...}``, ``{"intValue": "3"}``, ...)."""
    if not isinstance(value, dict) or not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind == "stringValue":
        return inner
    if kind == "intValue":
        return int(inner)
    if kind == "doubleValue":
        return float(inner)
    if kind == "boolValue":
        return bool(inner)
    if kind == "arrayValue":
        return [any_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return attributes((inner or {}).get("values", []))
    if kind == "bytesValue":
        return base64.b64decode(inner).hex()
    return None


def attributes(kvs: Any) -> dict[str, Any]:
    """``[{"key": k, "value": AnyValue}]`` -> ``{k: value}`` (malformed entries skipped)."""
    out: dict[str, Any] = {}
    for kv in kvs if isinstance(kvs, list) else ():
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = any_value(kv.get("value"))
    return out


@dataclass(slots=True)
class Span:
    trace_id: str
    span_id: str | None
    parent_span_id: str | None
    name: str
    op: str
    start_ns: int | None
    end_ns: int | None
    attrs: dict[str, Any]
    resource: dict[str, Any]
    status_code: Any
    status_message: str | None

    @property
    def is_error(self) -> bool:
        return self.status_code in _ERROR_CODES or self.attrs.get("error.type") is not None


def _ns(value: Any) -> int | None:
    try:
        return None if value in (None, "", 0, "0") else int(value)
    except (TypeError, ValueError):
        return None


def parse_span(raw: Any, resource: dict[str, Any], where: str) -> Span:
    if not isinstance(raw, dict):
        raise RecordProblem(WRONG_TYPE, f"{where} is not an object")
    trace_id = raw.get("traceId")
    if not isinstance(trace_id, str) or not trace_id.strip("0 "):
        raise RecordProblem(NO_TRACE_ID, f"{where} has no traceId")
    attrs = attributes(raw.get("attributes"))
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    op = attrs.get("gen_ai.operation.name") or (name.split(" ", 1)[0] if name else "")
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    return Span(
        trace_id=trace_id.lower(),
        span_id=raw.get("spanId") or None,
        parent_span_id=raw.get("parentSpanId") or None,
        name=name,
        op=str(op),
        start_ns=_ns(raw.get("startTimeUnixNano")),
        end_ns=_ns(raw.get("endTimeUnixNano")),
        attrs=attrs,
        resource=resource,
        status_code=status.get("code"),
        status_message=status.get("message") if isinstance(status.get("message"), str) else None,
    )


def _time(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns // 1_000_000 / 1000, tz=UTC)


def _messages_text(value: Any, role: str, last: bool) -> str | None:
    """The first (or last) ``role`` message text in gen_ai.input/output.messages."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(value, list):
        return None
    found = None
    for message in value:
        if not isinstance(message, dict) or message.get("role") != role:
            continue
        text = message.get("content")
        if not isinstance(text, str):
            parts = message.get("parts") or []
            texts = [
                p.get("content") or p.get("text")
                for p in parts
                if isinstance(p, dict) and p.get("type", "text") == "text"
            ]
            text = "\n".join(t for t in texts if isinstance(t, str)) or None
        if text is not None:
            found = text
            if not last:
                return found
    return found


def _first(spans: Sequence[Span], *keys: str) -> Any:
    for span in spans:
        for key in keys:
            value = span.attrs.get(key)
            if value is None:
                value = span.resource.get(key)
            if value is not None:
                return value
    return None


class TraceCaseBuilder:
    def __init__(
        self, finisher: StepFinisher, *, keep_malformed: bool = False, python_literals: bool = False
    ) -> None:
        self.finisher = finisher
        self.keep_malformed = keep_malformed
        self.python_literals = python_literals

    def build(self, trace_id: str, spans: list[Span], uri: str, position: int) -> dict[str, Any]:
        spans = sorted(spans, key=lambda s: (s.start_ns is None, s.start_ns or 0))
        runs = [s for s in spans if s.op in RUN_OPS]
        ids = {s.span_id for s in runs}
        run = next((s for s in runs if s.parent_span_id not in ids), None)
        models = [s for s in spans if s.op in MODEL_OPS]
        row = new_case_row(make_case_id("otel", trace_id), "otel", uri, position, trace_id)
        row["trace_id"] = trace_id
        head = ([run] if run else []) + models
        row["session_id"] = _str(_first(([run] if run else []) + spans, "gen_ai.conversation.id"))
        row["tenant_id"] = _str(_first(spans, "tenant.id"))
        row["user_id"] = _str(_first(spans, "user.id", "enduser.id"))
        starts = [s.start_ns for s in spans if s.start_ns is not None]
        row["recorded_at"] = _time(
            run.start_ns if run and run.start_ns else min(starts, default=None)
        )
        agent = row["agent"]
        agent["agent_version"] = _str(_first(head, "gen_ai.agent.version", "service.version"))
        agent["model_name"] = _str(_first(head, "gen_ai.request.model", "gen_ai.response.model"))
        params = {
            key: _first(head, f"gen_ai.request.{key}")
            for key in ("temperature", "top_p", "max_tokens")
        }
        params = {k: v for k, v in params.items() if v is not None}
        agent["model_params"] = orjson.dumps(params).decode() if params else None
        instructions = _first(head, "gen_ai.system_instructions")
        if instructions is not None:
            text = instructions if isinstance(instructions, str) else orjson.dumps(instructions)
            digest = hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()
            agent["system_prompt_version"] = f"sha256:{digest}"
        row["user_input"] = _messages_text(_first(head, "gen_ai.input.messages"), "user", False)
        tail = ([run] if run else []) + models[::-1]
        row["outcome"]["answer_text"] = _messages_text(
            _first(tail, "gen_ai.output.messages"), "assistant", True
        )
        if run is not None:
            if run.is_error:
                row["outcome"]["status"] = "failed"
            elif run.status_code in _OK_CODES:
                row["outcome"]["status"] = "success"
        row["steps"] = self._steps([s for s in spans if s.op in TOOL_OPS + MODEL_OPS])
        self.finisher.finish(row)
        return row

    def _steps(self, spans: list[Span]) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = []
        seq_of: dict[str, int] = {}
        for span in spans:
            seq = len(steps)
            if span.op in TOOL_OPS:
                name = span.attrs.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool ")
                step = new_step(seq, "tool", str(name or "execute_tool"))
                self._set_arguments(step, span)
                step["response"] = json_text(span.attrs.get("gen_ai.tool.call.result"))
            else:
                model = span.attrs.get("gen_ai.request.model") or span.attrs.get(
                    "gen_ai.response.model"
                )
                step = new_step(seq, "model", str(model or span.op))
                used = [span.attrs.get(f"gen_ai.usage.{k}_tokens") for k in ("input", "output")]
                if any(u is not None for u in used):
                    step["tokens"] = sum(int(u) for u in used if u is not None)
            if span.is_error:
                error = span.attrs.get("error.type") or span.status_message or "error"
                step["error"] = str(error)
                step["status"] = "timeout" if "timeout" in str(error).lower() else "error"
            if span.start_ns is not None and span.end_ns is not None:
                step["latency_ms"] = max(0, (span.end_ns - span.start_ns) // 1_000_000)
            step["started_at"] = _time(span.start_ns)
            if span.parent_span_id in seq_of:
                step["parent_seq"] = seq_of[span.parent_span_id]
            if span.span_id:
                seq_of[span.span_id] = seq
            steps.append(step)
        return steps

    def _set_arguments(self, step: dict[str, Any], span: Span) -> None:
        value = span.attrs.get("gen_ai.tool.call.arguments")
        if (
            set_arguments(
                step,
                value,
                keep_malformed=self.keep_malformed,
                python_literals=self.python_literals,
            )
            == "malformed"
        ):
            raise RecordProblem(
                MALFORMED_ARGUMENTS, f"span {span.span_id}: gen_ai.tool.call.arguments"
            )


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
