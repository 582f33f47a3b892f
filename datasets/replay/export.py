"""Exporting a golden set for other replay tools, one JSONL file per case.

* ``chronicle``: the envelopes ``agent-chronicle`` 1.x replays (``agentplane_primitives.models.
  Envelope`` as JSON, schema 0.2): one envelope per recorded step (``kind: llm`` for a model
  step, ``kind: tool`` for the others), named by the tool, in call order, the recorded
  arguments as ``input.raw``, the recorded response as
  ``output.raw`` or the recorded error as ``output.error`` (status ``failure``), and the
  ``chronicle.sequence`` (1-based, in the span) / ``chronicle.invocation_index`` (nth call of
  that name) metadata Chronicle's replay orders by. A call repeated with the same arguments
  after a failure is ``attempt`` n+1 with a ``retry_of`` link. ``golden.*`` metadata carries
  what an envelope has no field for (kind, timeout, write flag, system, tokens), so ``golden
  ingest --format chronicle`` reads the export back to the same steps. Plain JSON:
  agent-chronicle is not needed to write it.
* ``chat-jsonl``: OpenAI chat transcripts (``export_chat.py``) that ``golden ingest --format
  chat`` reads back to the same steps, kinds, statuses, mutating flags and tokens.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from golden_distill.datasets.canonical_json import canonical_json
from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.replay.export_chat import chat_transcript
from golden_distill.datasets.replay.stubs import parse_json

FORMATS = ("chronicle", "chat-jsonl")
#: The agentplane-primitives schema version the envelopes follow.
ENVELOPE_SCHEMA_VERSION = "0.2"
SEQUENCE_KEY = "chronicle.sequence"
INVOCATION_KEY = "chronicle.invocation_index"
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def _hex(text: str, length: int) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()[:length]
    return digest if digest.strip("0") else "1" + digest[1:]


def _error(step: Step) -> dict[str, str]:
    """``output.error``: type from a recorded ``code``/``type`` (else the status), message."""
    value = parse_json(step.error) if step.error else None
    if isinstance(value, dict):
        kind = value.get("code") or value.get("type") or "ToolError"
        message = value.get("message") or step.error or ""
    else:
        kind = "TimeoutError" if step.status == "timeout" else "ToolError"
        message = step.error if step.error is not None else step.status
    return {"type": str(kind), "message": str(message)}


def _golden_metadata(case: Case, step: Step, args: Any) -> dict[str, Any]:
    """What an envelope has no field for, so ``golden ingest --format chronicle`` gives the
    step back whole (Chronicle ignores unknown metadata keys)."""
    meta: dict[str, Any] = {
        "golden.case_id": case.case_id,
        "golden.step_seq": step.seq,
        "golden.kind": step.kind,
        "golden.status": step.status,
        "golden.is_mutating": step.is_mutating,
        "golden.system": step.system,
        "golden.tokens": step.tokens,
    }
    if not isinstance(args, dict) or step.arguments is None:
        meta["golden.arguments"] = None if step.arguments is None else args
    if step.status != "ok" and _error(step)["message"] != step.error:
        meta["golden.error"] = step.error
    if step.status != "ok" and step.response is not None:  # output.raw holds no failure's
        meta["golden.response"] = parse_json(step.response)
    if step.latency_ms is None:
        meta["golden.latency_ms"] = None
    if step.started_at is None:
        meta["golden.started_at"] = None
    return meta


def _payloads(case: Case, step: Step, args: Any, ok: bool) -> tuple[str, Any, Any]:
    """(kind, input, output): a model step is an ``llm`` envelope, any other a ``tool`` one."""
    raw_input = args if isinstance(args, dict) else {"arguments": args}
    response = parse_json(step.response) if ok else None
    error = None if ok else _error(step)
    if step.kind != "model":
        return "tool", {"raw": raw_input}, {"raw": response, "error": error}
    model = case.agent.model_name or step.name
    output: dict[str, Any] = {"raw": response, "error": error}
    if ok and step.tokens is not None:
        output["usage"] = {"output": step.tokens}
    return "llm", {"model": model, "messages": [], "raw": raw_input}, output


def chronicle_envelopes(case: Case) -> list[dict[str, Any]]:
    """The case's recorded steps as Chronicle envelopes (JSON-ready dicts): model steps as
    ``llm`` envelopes, tool, hand-off and route steps as ``tool`` ones."""
    trace_id = _hex(f"trace\x1f{case.trace_id or case.case_id}", 32)
    span_id = _hex(f"span\x1f{case.case_id}", 16)
    clock = case.recorded_at or _EPOCH
    invocations: dict[str, int] = {}
    failed: dict[tuple[str, bytes], tuple[str, int]] = {}  # last failed call: (envelope, attempt)
    envelopes = []
    for n, step in enumerate(sorted(case.steps, key=lambda s: s.seq), 1):
        invocations[step.name] = invocation = invocations.get(step.name, 0) + 1
        envelope_id = _hex(f"envelope\x1f{case.case_id}\x1f{step.seq}", 16)
        args = parse_json(step.arguments)
        key = (step.name, canonical_json(args))
        attempt, links = 1, []
        if key in failed:
            previous, previous_attempt = failed.pop(key)
            attempt = previous_attempt + 1
            links = [{"type": "retry_of", "envelope_id": previous}]
        started = step.started_at or clock
        ended = started + timedelta(milliseconds=max(step.latency_ms or 0, 0))
        clock = ended
        ok = step.status == "ok"
        if not ok:
            failed[key] = (envelope_id, attempt)
        kind, payload_in, payload_out = _payloads(case, step, args, ok)
        envelopes.append(
            {
                "schema_version": ENVELOPE_SCHEMA_VERSION,
                "envelope_id": envelope_id,
                "span_id": span_id,
                "trace_id": trace_id,
                "parent_envelope_id": None,
                "name": step.name,
                "kind": kind,
                "attempt": attempt,
                "links": links,
                "envelope_status": {
                    "state": "closed",
                    "status": "success" if ok else "failure",
                    "started_at": started.isoformat(),
                    "ended_at": ended.isoformat(),
                },
                "input": payload_in,
                "output": payload_out,
                "metadata": {
                    SEQUENCE_KEY: n,
                    INVOCATION_KEY: invocation,
                    **_golden_metadata(case, step, args),
                },
            }
        )
    return envelopes


def export_cases(cases: Iterable[Case], fmt: str, out_dir: Path) -> Iterator[Path]:
    """Write one ``<case_id>.jsonl`` per case into ``out_dir``; yields each path written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    out_dir.mkdir(parents=True, exist_ok=True)
    for case in cases:
        case = getattr(case, "case", case)
        if fmt == "chronicle":
            lines = [orjson.dumps(e) for e in chronicle_envelopes(case)]
        else:
            lines = [orjson.dumps(chat_transcript(case))]
        path = out_dir / f"{case.case_id}.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        yield path
