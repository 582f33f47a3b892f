"""One agent-chronicle envelope (``agentplane_primitives`` ``Envelope``, schema 0.x) -> one step.

An envelope records one boundary crossing: ``kind: tool`` (``input.raw`` the arguments by name,
``output.raw`` the return value or ``output.error`` ``{type, message}``) or ``kind: llm``
(``input.model``/``messages``/``raw``, ``output.content`` blocks, ``usage`` token buckets,
``finish_reason``). Status is ``envelope_status.status`` (``success``/``failure``) of a
``closed`` envelope; an ``open`` one never finished and cannot be a step. Checked by hand, so the
reader needs neither agent-chronicle nor agentplane-primitives installed.

``golden.*`` metadata (what ``golden export --format chronicle`` adds; Chronicle ignores it) gives
back what an envelope has no field for: the step's kind (``handoff``, ``route``), a ``timeout``
as opposed to an error, ``is_mutating``, ``system``, tokens, the recorded error text and
arguments that were not an object. Without it, kinds and write flags come from the hand-off list
and the tool catalogue, as for every other source.

Pure: raises ``RecordProblem`` naming the field (never its value).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from golden_distill.datasets.quarantine import MISSING_FIELD, WRONG_TYPE
from golden_distill.datasets.schema import STEP_KINDS, STEP_STATUSES
from golden_distill.datasets.sources.case_rows import RecordProblem, new_step, to_utc

SEQUENCE_KEY = "chronicle.sequence"
INVOCATION_KEY = "chronicle.invocation_index"
#: ``output.error.type`` values that mean the call timed out.
TIMEOUT_TYPES = frozenset({"TimeoutError", "asyncio.TimeoutError", "ReadTimeout", "Timeout"})
_USAGE_BUCKETS = ("input", "cached_read", "cache_write", "output", "reasoning")


@dataclass(slots=True)
class Envelope:
    """The parts of an envelope a case needs, checked."""

    trace_id: str
    span_id: str
    sequence: int | None
    started_at: datetime
    step: dict[str, Any]
    recorded: frozenset[str]  # step fields the envelope's golden.* metadata set
    user_text: str | None = None  # an llm envelope's first user message
    model: str | None = None
    answer: str | None = None  # an llm envelope's text output


def _str(envelope: dict[str, Any], key: str) -> str:
    value = envelope.get(key)
    if value is None:
        raise RecordProblem(MISSING_FIELD, key)
    if not isinstance(value, str) or not value:
        raise RecordProblem(WRONG_TYPE, key)
    return value


def _dict(value: Any, where: str, *, required: bool = True) -> dict[str, Any]:
    if value is None and not required:
        return {}
    if value is None:
        raise RecordProblem(MISSING_FIELD, where)
    if not isinstance(value, dict):
        raise RecordProblem(WRONG_TYPE, where)
    return value


def _int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordProblem(WRONG_TYPE, where)
    return value


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _text_blocks(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    texts = [t for t in texts if isinstance(t, str)]
    return "\n".join(texts) if texts else None


def parse_envelope(envelope: Any) -> Envelope:
    """The checked envelope and its step (``seq`` set later, by the run's order)."""
    if not isinstance(envelope, dict):
        raise RecordProblem(WRONG_TYPE, "envelope is not a JSON object")
    for key in ("envelope_id", "span_id", "trace_id"):
        _str(envelope, key)
    name = _str(envelope, "name")
    kind = envelope.get("kind")
    if kind not in ("tool", "llm"):
        raise RecordProblem(WRONG_TYPE if kind is not None else MISSING_FIELD, "kind")
    status = _dict(envelope.get("envelope_status"), "envelope_status")
    if status.get("state") != "closed":
        raise RecordProblem(WRONG_TYPE, "envelope_status.state is not closed (call unfinished)")
    if status.get("status") not in ("success", "failure"):
        raise RecordProblem(WRONG_TYPE, "envelope_status.status")
    started = to_utc(status.get("started_at"))
    ended = to_utc(status.get("ended_at"))
    if started is None:
        raise RecordProblem(WRONG_TYPE, "envelope_status.started_at")
    payload_in = _dict(envelope.get("input"), "input")
    payload_out = _dict(envelope.get("output"), "output")
    metadata = _dict(envelope.get("metadata"), "metadata", required=False)
    golden = {k[len("golden.") :]: v for k, v in metadata.items() if k.startswith("golden.")}

    step = new_step(0, "model" if kind == "llm" else "tool", name)
    raw_args = _dict(payload_in.get("raw"), "input.raw")
    if "arguments" in golden:  # arguments that were not an object (input.raw holds only those)
        step["arguments"] = None if golden["arguments"] is None else _json(golden["arguments"])
    else:
        step["arguments"] = _json(raw_args)
    ok = status["status"] == "success"
    error = _dict(payload_out.get("error"), "output.error", required=False)
    if ok:
        step["response"] = None if payload_out.get("raw") is None else _json(payload_out["raw"])
    else:
        step["status"] = "timeout" if error.get("type") in TIMEOUT_TYPES else "error"
        message = error.get("message")
        step["error"] = message if isinstance(message, str) and message else error.get("type")
    if ended is not None:
        step["latency_ms"] = max(int((ended - started).total_seconds() * 1000), 0)
    step["started_at"] = started
    parsed = Envelope(
        envelope["trace_id"],
        envelope["span_id"],
        _int(metadata.get(SEQUENCE_KEY), f"metadata.{SEQUENCE_KEY}"),
        started,
        step,
        frozenset(),
    )
    if kind == "llm":
        _llm(parsed, payload_in, payload_out)
    parsed.recorded = _apply_golden(step, golden)
    return parsed


def _llm(parsed: Envelope, payload_in: dict[str, Any], payload_out: dict[str, Any]) -> None:
    """A model step: tokens from the usage buckets, the user's words, the model's answer."""
    step = parsed.step
    usage = payload_out.get("usage")
    if isinstance(usage, dict):
        step["tokens"] = sum(
            v for k in _USAGE_BUCKETS if isinstance(v := usage.get(k), int) and v >= 0
        )
    model = payload_in.get("model")
    parsed.model = model if isinstance(model, str) else None
    for message in payload_in.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            parsed.user_text = _text_blocks(message.get("content"))
            break
    parsed.answer = _text_blocks(payload_out.get("content"))
    if step["status"] == "ok" and step["response"] is None and payload_out.get("content"):
        step["response"] = _json(payload_out["content"])


def _apply_golden(step: dict[str, Any], golden: dict[str, Any]) -> frozenset[str]:
    """The ``golden.*`` facts, applied; the step fields they recorded."""
    recorded: set[str] = set()
    if "kind" in golden:
        if golden["kind"] not in STEP_KINDS:
            raise RecordProblem(WRONG_TYPE, "metadata.golden.kind")
        step["kind"] = golden["kind"]
        recorded.add("kind")
    if "status" in golden:
        if golden["status"] not in STEP_STATUSES or (golden["status"] == "ok") != (
            step["status"] == "ok"
        ):
            raise RecordProblem(WRONG_TYPE, "metadata.golden.status")
        step["status"] = golden["status"]
    if "error" in golden:
        error = golden["error"]
        step["error"] = error if error is None or isinstance(error, str) else _json(error)
    if "is_mutating" in golden:
        if golden["is_mutating"] is not None and not isinstance(golden["is_mutating"], bool):
            raise RecordProblem(WRONG_TYPE, "metadata.golden.is_mutating")
        step["is_mutating"] = golden["is_mutating"]
        recorded.add("is_mutating")
    if "system" in golden:
        step["system"] = None if golden["system"] is None else str(golden["system"])
        recorded.add("system")
    if "tokens" in golden:
        step["tokens"] = _int(golden["tokens"], "metadata.golden.tokens")
    if "response" in golden:
        step["response"] = None if golden["response"] is None else _json(golden["response"])
    if "latency_ms" in golden:
        step["latency_ms"] = _int(golden["latency_ms"], "metadata.golden.latency_ms")
    if "started_at" in golden:
        step["started_at"] = to_utc(golden["started_at"])
    if "step_seq" in golden:
        _int(golden["step_seq"], "metadata.golden.step_seq")
    return frozenset(recorded)
