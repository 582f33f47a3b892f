"""``golden export --format chat-jsonl``: one OpenAI chat transcript per case that reads back.

Each line is ``{"messages", "tools", "metadata", ...ids}``. ``messages`` hold only what the
OpenAI chat message types allow (``system``/``user``/``assistant``/``tool`` with ``content``,
``name`` on the first three, ``tool_calls`` with string ``arguments``, ``tool_call_id``): the
recorded system prompt and earlier turns (``context.messages``), the run's user turn, one
assistant turn per recorded tool call and its ``role: tool`` reply, the answer. A failed call's
reply is its recorded error as the content string (``Error: ...`` unless the text already reads
as an error), so any consumer sees the failure. ``tools`` declares each recorded tool as a
function with the argument names and JSON types its calls used.

What the chat format has no place for travels in the record's ``metadata.golden`` (the chat
adapter reads it back; other consumers ignore it): per call, by ``tool_call_id``, the step's
``seq``, ``kind`` (tool or handoff), ``status`` (``timeout`` is not ``error``), ``is_mutating``,
``system``, ``tokens``, ``latency_ms``; the recorded ``model``/``route`` steps whole (a transcript
has no message for them); where the run's own turn starts; the outcome's state, hand-off, reward
and the intent; the model parameters, prompt version and variables; the memory, retrieved
chunks, environment versions and baseline state the replay starts from. So ``golden ingest
--format chat`` of an export gives the case back: its steps with their kinds, statuses,
mutating flags and tokens, and everything else but its id, source and transcript text.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.replay.stubs import TOOL_KINDS, parse_json

#: Keys each role may carry (openai-python ``ChatCompletion*MessageParam``), in output order.
MESSAGE_KEYS: dict[str, tuple[str, ...]] = {
    "system": ("role", "content", "name"),
    "developer": ("role", "content", "name"),
    "user": ("role", "content", "name"),
    "assistant": ("role", "content", "name", "tool_calls", "refusal"),
    "tool": ("role", "content", "tool_call_id"),
}
#: A reply text that already reads as an error (the chat adapter's default error patterns).
_READS_AS_ERROR = re.compile(r'^\s*(?:Error:|\{\s*"error"\s*:)')
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _call_id(step: Step) -> str:
    return f"call_{step.seq}"


def _text(value: Any) -> str | None:
    """Message content as the chat types allow: a string (parts lists joined), or None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text") for p in value if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return orjson.dumps(value).decode()


def _standard_message(message: Any) -> dict[str, Any] | None:
    """A recorded context message reduced to the keys its role allows (None: not a message)."""
    if not isinstance(message, dict) or message.get("role") not in MESSAGE_KEYS:
        return None
    role = message["role"]
    out: dict[str, Any] = {"role": role, "content": _text(message.get("content"))}
    if role == "tool":
        out["content"] = out["content"] or ""
        out["tool_call_id"] = str(message.get("tool_call_id") or "")
        return out
    if isinstance(message.get("name"), str) and message["name"]:
        out["name"] = message["name"]
    if role == "assistant" and message.get("tool_calls"):
        calls = []
        for call in message["tool_calls"]:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                continue
            args = function.get("arguments")
            text = args if isinstance(args, str) else orjson.dumps(args or {}).decode()
            calls.append(
                {
                    "id": str(call.get("id") or ""),
                    "type": "function",
                    "function": {"name": function["name"], "arguments": text},
                }
            )
        if calls:
            out["tool_calls"] = calls
    elif out["content"] is None:
        out["content"] = ""
    return out


def _earlier_turns(case: Case) -> list[dict[str, Any]]:
    """The recorded system prompt and earlier turns: ``context.messages`` up to this run's user
    turn (native recordings list it last; chat sources list the run itself after it, which is
    rebuilt from the steps instead)."""
    recorded = parse_json(case.context.messages)
    if not isinstance(recorded, list):
        return []
    kept: list[dict[str, Any]] = []
    for message in recorded:
        if (
            isinstance(message, dict)
            and message.get("role") == "user"
            and _text(message.get("content")) == case.user_input
        ):
            return kept  # the run starts here: what follows is rebuilt from the steps
        standard = _standard_message(message)
        if standard is not None:
            kept.append(standard)
    return kept


def _tools(steps: list[Step]) -> list[dict[str, Any]]:
    """One function declaration per recorded tool: the argument names and JSON types used."""
    properties: dict[str, dict[str, dict[str, str]]] = {}
    for step in steps:
        props = properties.setdefault(step.name, {})
        args = parse_json(step.arguments)
        if isinstance(args, dict):
            for key, value in args.items():
                if key not in props:
                    kind = _JSON_TYPES.get(type(value))
                    if kind is None:
                        kind = "array" if isinstance(value, list) else "object"
                    props[key] = {} if value is None else {"type": kind}
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "properties": props},
            },
        }
        for name, props in properties.items()
    ]


def _call_facts(step: Step) -> dict[str, Any]:
    facts: dict[str, Any] = {"seq": step.seq, "kind": step.kind, "status": step.status}
    for name in ("is_mutating", "system", "tokens", "latency_ms", "parent_seq"):
        value = getattr(step, name)
        if value is not None:
            facts[name] = value
    if step.started_at is not None:
        facts["started_at"] = step.started_at.isoformat()
    return facts


def _reply(step: Step, facts: dict[str, Any]) -> dict[str, Any]:
    """The ``role: tool`` reply: the response, or the recorded error as the content string."""
    if step.status == "ok":
        content = step.response if step.response is not None else ""
        if step.response is None:
            facts["response"] = None
        return {"role": "tool", "content": content, "tool_call_id": _call_id(step)}
    error = step.error if step.error is not None else step.status
    content = error if _READS_AS_ERROR.match(error) else f"Error: {error}"
    if content != step.error:
        facts["error"] = step.error
    facts["response"] = step.response  # the content holds the error, not a response
    return {"role": "tool", "content": content, "tool_call_id": _call_id(step)}


def _other_step(step: Step) -> dict[str, Any]:
    """A model or route step, whole (a transcript has no message for it)."""
    out = _call_facts(step)
    out.update(
        name=step.name,
        occurrence=step.occurrence,
        arguments=step.arguments,
        response=step.response,
        error=step.error,
    )
    return out


def chat_transcript(case: Case) -> dict[str, Any]:
    """One OpenAI chat transcript of ``case`` (see the module doc)."""
    steps = sorted(case.steps, key=lambda s: s.seq)
    calls = [s for s in steps if s.kind in TOOL_KINDS]
    messages = _earlier_turns(case)
    turn_start = len(messages)
    messages.append({"role": "user", "content": case.user_input or ""})
    facts: dict[str, dict[str, Any]] = {}
    for step in calls:
        call_facts = facts[_call_id(step)] = _call_facts(step)
        arguments = step.arguments if step.arguments is not None else "{}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": _call_id(step),
                        "type": "function",
                        "function": {"name": step.name, "arguments": arguments},
                    }
                ],
            }
        )
        messages.append(_reply(step, call_facts))
        if step.arguments is None:
            call_facts["arguments"] = None
    if case.outcome.answer_text:
        messages.append({"role": "assistant", "content": case.outcome.answer_text})
    outcome = case.outcome
    golden: dict[str, Any] = {
        "case_id": case.case_id,
        "turn_start": turn_start,
        "user_input": case.user_input,
        "calls": facts,
        "other_steps": [_other_step(s) for s in steps if s.kind not in TOOL_KINDS],
        "intent": {"name": case.intent.name, "confidence": case.intent.confidence},
        "outcome": {
            "final_state": outcome.final_state,
            "handoff": outcome.handoff,
            "handoff_reason": outcome.handoff_reason,
            "low_confidence": outcome.low_confidence,
            "reward": outcome.reward,
        },
        # the run's setting, as recorded (JSON text fields stay text)
        "agent": {
            "model_params": case.agent.model_params,
            "system_prompt_version": case.agent.system_prompt_version,
            "prompt_variables": case.agent.prompt_variables,
        },
        "context": {
            "memory": case.context.memory,
            "env_versions": case.context.env_versions,
            "baseline_state": case.context.baseline_state,
            "retrieved_chunks": [
                {"text": c.text, "index_snapshot_id": c.index_snapshot_id, "query": c.query}
                for c in case.context.retrieved_chunks
            ],
        },
    }
    record: dict[str, Any] = {
        "id": case.trace_id or case.case_id,
        "case_id": case.case_id,
        "session_id": case.session_id,
        "turn_index": case.turn_index,
        "tenant_id": case.tenant_id,
        "user_id": case.user_id,
        "agent_version": case.agent.agent_version,
        "model": case.agent.model_name,
        "status": outcome.status,
        "recorded_at": case.recorded_at.isoformat() if case.recorded_at else None,
        "messages": messages,
        "tools": _tools(calls),
        "metadata": {"golden": golden},
    }
    if case.expected is not None:
        record["expected"] = {
            "final_state": case.expected.final_state,
            "actions": [{"name": a.name, "arguments": a.arguments} for a in case.expected.actions],
            "answer_facts": list(case.expected.answer_facts),
            "source": case.expected.source,
        }
    return record
