"""Canonical cases -> OTLP/JSON GenAI spans (for tests, benchmarks and teams feeding a collector).

The inverse of the OTel adapter for the fields the GenAI conventions carry: one trace per case,
an ``invoke_agent`` run span and one ``execute_tool``/``chat`` child span per step. Written as
JSONL, one ``ExportTraceServiceRequest`` per line (``traces_per_line`` cases each), the layout the
collector's file exporter produces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        wrapped: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        wrapped = {"intValue": str(value)}
    elif isinstance(value, float):
        wrapped = {"doubleValue": value}
    else:
        wrapped = {"stringValue": str(value)}
    return {"key": key, "value": wrapped}


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [_kv(k, v) for k, v in values.items() if v is not None]


def _ns(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000) * 1_000_000


def trace_hex(case: dict[str, Any]) -> str:
    """A 32-hex-digit trace id derived from the case's trace id (or case id)."""
    return hashlib.sha256((case.get("trace_id") or case["case_id"]).encode()).hexdigest()[:32]


def case_to_spans(case: dict[str, Any]) -> list[dict[str, Any]]:
    trace_id = trace_hex(case)
    agent = case.get("agent") or {}
    outcome = case.get("outcome") or {}
    base_ns = _ns(case.get("recorded_at")) or 1_764_000_000_000_000_000
    run_id = trace_id[:16]
    model_params: dict[str, Any] = {}
    if agent.get("model_params"):
        try:
            parsed = orjson.loads(agent["model_params"])
            model_params = parsed if isinstance(parsed, dict) else {}
        except orjson.JSONDecodeError:
            model_params = {}
    messages = None
    if case.get("user_input") is not None:
        part = {"type": "text", "content": case["user_input"]}
        messages = orjson.dumps([{"role": "user", "parts": [part]}]).decode()
    answer = None
    if outcome.get("answer_text") is not None:
        part = {"type": "text", "content": outcome["answer_text"]}
        answer = orjson.dumps([{"role": "assistant", "parts": [part]}]).decode()
    spans: list[dict[str, Any]] = []
    end_ns = base_ns
    for step in case.get("steps") or []:
        start = _ns(step.get("started_at")) or base_ns + (step["seq"] + 1) * 1_000_000
        end = start + (step.get("latency_ms") or 0) * 1_000_000
        end_ns = max(end_ns, end)
        span_id = hashlib.sha256(f"{trace_id}:{step['seq']}".encode()).hexdigest()[:16]
        is_model = step.get("kind") == "model"
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat" if is_model else "execute_tool",
            "gen_ai.conversation.id": case.get("session_id"),
        }
        if is_model:
            attrs["gen_ai.request.model"] = step["name"]
            attrs["gen_ai.usage.output_tokens"] = step.get("tokens")
        else:
            attrs["gen_ai.tool.name"] = step["name"]
            attrs["gen_ai.tool.call.id"] = f"call_{span_id}"
            attrs["gen_ai.tool.call.arguments"] = step.get("arguments")
            attrs["gen_ai.tool.call.result"] = step.get("response")
        failed = step.get("status") in ("error", "timeout")
        if failed:
            attrs["error.type"] = "timeout" if step["status"] == "timeout" else "tool_error"
        spans.append(
            {
                "traceId": trace_id,
                "spanId": span_id,
                "parentSpanId": run_id,
                "name": f"{'chat' if is_model else 'execute_tool'} {step['name']}",
                "kind": 3 if is_model else 1,
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(end),
                "attributes": _attrs(attrs),
                "status": {"code": 2} if failed else {},
            }
        )
    run_attrs = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": case.get("session_id"),
        "gen_ai.agent.version": agent.get("agent_version"),
        "gen_ai.request.model": agent.get("model_name"),
        "gen_ai.request.temperature": model_params.get("temperature"),
        "gen_ai.request.top_p": model_params.get("top_p"),
        "gen_ai.request.max_tokens": model_params.get("max_tokens"),
        "gen_ai.input.messages": messages,
        "gen_ai.output.messages": answer,
        "tenant.id": case.get("tenant_id"),
        "user.id": case.get("user_id"),
    }
    status: dict[str, Any] = {}
    if outcome.get("status") in ("failed", "error"):
        status = {"code": 2}
    elif outcome.get("status") == "success":
        status = {"code": 1}
    run = {
        "traceId": trace_id,
        "spanId": run_id,
        "name": "invoke_agent",
        "kind": 1,
        "startTimeUnixNano": str(base_ns),
        "endTimeUnixNano": str(end_ns),
        "attributes": _attrs(run_attrs),
        "status": status,
    }
    return [run, *spans]


def export_request(cases: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One ExportTraceServiceRequest holding every span of ``cases``."""
    spans = [span for case in cases for span in case_to_spans(case)]
    resource = {"attributes": _attrs({"service.name": "golden-distill-export"})}
    scope = {"scope": {"name": "golden_distill"}, "spans": spans}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def write_otlp_jsonl(
    cases: Iterable[dict[str, Any]], path: Path, *, traces_per_line: int = 100
) -> int:
    """Write cases as OTLP JSONL; returns the number of traces written."""
    written, batch = 0, []
    with Path(path).open("wb") as fh:
        for case in cases:
            batch.append(case)
            if len(batch) >= traces_per_line:
                fh.write(orjson.dumps(export_request(batch)) + b"\n")
                written += len(batch)
                batch = []
        if batch:
            fh.write(orjson.dumps(export_request(batch)) + b"\n")
            written += len(batch)
    return written
