"""The step facts a golden-distill chat export carries beside its messages (``metadata.golden``).

A chat transcript says which tools were called, with what, and what came back; it has no place
for a step's kind (tool or hand-off), a timeout as opposed to an error, whether the call wrote,
its tokens, or the model and route steps. ``golden export --format chat-jsonl``
(``datasets/replay/export_chat.py``) writes those under the record's ``metadata.golden``, keyed by
``tool_call_id``; this module applies them to the steps the transcript gave, so an export reads
back to the case it came from. Transcripts without it are read as before.

Pure: raises ``RecordProblem`` (``wrong_type``, naming the field) for facts of the wrong shape.
"""

from __future__ import annotations

from typing import Any

from golden_distill.datasets.quarantine import WRONG_TYPE
from golden_distill.datasets.schema import STEP_KINDS, STEP_STATUSES
from golden_distill.datasets.sources.case_rows import (
    RecordProblem,
    json_text,
    new_step,
    set_arguments,
    to_utc,
)

#: Fields the export recorded itself: the finisher keeps them instead of asking the catalogue.
RECORDED = frozenset({"is_mutating", "system", "kind", "handoff"})
_INT_FIELDS = ("tokens", "latency_ms", "parent_seq")


def golden_facts(meta: dict[str, Any]) -> dict[str, Any] | None:
    """``metadata.golden`` of a transcript record, or None when it has none."""
    metadata = meta.get("metadata")
    golden = metadata.get("golden") if isinstance(metadata, dict) else None
    if golden is None:
        return None
    if not isinstance(golden, dict):
        raise RecordProblem(WRONG_TYPE, "metadata.golden is not an object")
    return golden


def turn_start(golden: dict[str, Any] | None) -> int:
    """Index of the run's own user turn (earlier messages are context only)."""
    start = 0 if golden is None else golden.get("turn_start", 0)
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise RecordProblem(WRONG_TYPE, "metadata.golden.turn_start")
    return start


def _int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordProblem(WRONG_TYPE, where)
    return value


def _apply(step: dict[str, Any], facts: dict[str, Any], where: str) -> None:
    kind = facts.get("kind", step["kind"])
    status = facts.get("status", step["status"])
    if kind not in STEP_KINDS:
        raise RecordProblem(WRONG_TYPE, f"{where}.kind")
    if status not in STEP_STATUSES:
        raise RecordProblem(WRONG_TYPE, f"{where}.status")
    step["kind"], step["status"] = kind, status
    seq = _int(facts.get("seq"), f"{where}.seq")
    if seq is not None:
        step["seq"] = seq
    for name in _INT_FIELDS:
        step[name] = _int(facts.get(name), f"{where}.{name}")
    mutating = facts.get("is_mutating")
    if mutating is not None and not isinstance(mutating, bool):
        raise RecordProblem(WRONG_TYPE, f"{where}.is_mutating")
    step["is_mutating"] = mutating
    system = facts.get("system")
    step["system"] = None if system is None else str(system)
    step["started_at"] = to_utc(facts.get("started_at"))
    if "response" in facts:
        step["response"] = json_text(facts["response"])
    if status == "ok":
        step["error"] = None
    elif "error" in facts:
        error = facts["error"]
        step["error"] = error if error is None or isinstance(error, str) else json_text(error)
    if "arguments" in facts and facts["arguments"] is None:
        step["arguments"] = None


def apply_golden(
    steps: list[dict[str, Any]],
    call_ids: list[str | None],
    golden: dict[str, Any],
    row: dict[str, Any],
) -> list[dict[str, Any]]:
    """``steps`` (from the transcript, ``call_ids`` beside them) with the recorded facts
    applied, the model/route steps put back, in recorded order; the outcome, intent, agent
    parameters and starting context too."""
    calls = golden.get("calls") or {}
    if not isinstance(calls, dict):
        raise RecordProblem(WRONG_TYPE, "metadata.golden.calls is not an object")
    for step, call_id in zip(steps, call_ids, strict=True):
        facts = calls.get(call_id) if call_id is not None else None
        if isinstance(facts, dict):
            _apply(step, facts, f"metadata.golden.calls[{call_id}]")
    others = golden.get("other_steps") or []
    if not isinstance(others, list):
        raise RecordProblem(WRONG_TYPE, "metadata.golden.other_steps is not a list")
    for i, facts in enumerate(others):
        where = f"metadata.golden.other_steps[{i}]"
        if not isinstance(facts, dict) or not isinstance(facts.get("name"), str):
            raise RecordProblem(WRONG_TYPE, f"{where}.name")
        step = new_step(len(steps), str(facts.get("kind")), facts["name"])
        set_arguments(step, facts.get("arguments"), keep_malformed=True)
        step["response"] = json_text(facts.get("response"))
        step["error"] = facts.get("error")
        _apply(step, facts, where)
        steps.append(step)
    steps.sort(key=lambda s: s["seq"])
    _outcome(golden, row)
    return steps


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _setting(golden: dict[str, Any], row: dict[str, Any]) -> None:
    """The agent's parameters and the context the run started from (JSON text as recorded)."""
    agent = golden.get("agent")
    if isinstance(agent, dict):
        for name in ("model_params", "system_prompt_version", "prompt_variables"):
            if name in agent:
                row["agent"][name] = _text(agent[name])
    context = golden.get("context")
    if not isinstance(context, dict):
        return
    for name in ("memory", "env_versions", "baseline_state"):
        if name in context:
            row["context"][name] = _text(context[name])
    chunks = context.get("retrieved_chunks")
    if isinstance(chunks, list):
        row["context"]["retrieved_chunks"] = [
            {k: _text(c.get(k)) for k in ("text", "index_snapshot_id", "query")}
            for c in chunks
            if isinstance(c, dict)
        ]


def _outcome(golden: dict[str, Any], row: dict[str, Any]) -> None:
    _setting(golden, row)
    if "user_input" in golden:
        text = golden["user_input"]
        row["user_input"] = None if text is None else str(text)
    intent = golden.get("intent")
    if isinstance(intent, dict):
        name, confidence = intent.get("name"), intent.get("confidence")
        row["intent"]["name"] = None if name is None else str(name)
        if isinstance(confidence, int | float) and not isinstance(confidence, bool):
            row["intent"]["confidence"] = float(confidence)
    outcome = golden.get("outcome")
    if not isinstance(outcome, dict):
        return
    for name in ("final_state", "handoff_reason"):
        value = outcome.get(name)
        row["outcome"][name] = None if value is None else str(value)
    for name in ("handoff", "low_confidence"):
        value = outcome.get(name)
        row["outcome"][name] = value if isinstance(value, bool) else None
    reward = outcome.get("reward")
    if isinstance(reward, int | float) and not isinstance(reward, bool):
        row["outcome"]["reward"] = float(reward)
