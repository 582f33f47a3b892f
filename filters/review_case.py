"""One published case as a reviewer reads it: the request, the transcript, every tool call with
its arguments and response, the recorded and the expected outcome, why the case is in the
version (funnel reasons, score, split, trust and what earned it) and its cluster's members.

Everything comes from the published (redacted) row and the version's clusters file; cluster
members that were not published are named by id only (their content never left the work
folder). Plain data out: the review page renders it, the review sheet flattens it to text.
"""

from __future__ import annotations

import json
from typing import Any

from golden_distill.filters.trust import HUMAN, ORACLE, ORACLE_SOURCES

#: The recorded outcome's fields a reviewer sees.
OUTCOME_FIELDS = ("answer_text", "final_state", "status", "handoff", "handoff_reason", "reward")


def pretty_json(text: str | None) -> str:
    """JSON text indented for reading (keys in recorded order); other text as it is."""
    if text is None:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def _message_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(content, ensure_ascii=False)


def transcript(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation as ``{role, text, tool_calls: [{name, arguments}]}`` turns: the
    recorded messages when the source kept them (chat transcripts), else the request, one turn
    per step and the final answer (native, evidence and span sources)."""
    context = row.get("context") or {}
    try:
        messages = json.loads(context.get("messages") or "[]")
    except ValueError:
        messages = []
    turns = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments, ensure_ascii=False)
                calls.append({"name": str(function.get("name")), "arguments": arguments})
        role = str(message.get("role") or "?")
        if role == "tool" and message.get("name"):
            role = f"tool {message['name']}"
        turns.append({"role": role, "text": _message_text(message.get("content")),
                      "tool_calls": calls})  # fmt: skip
    if turns:
        return turns
    turns.append({"role": "user", "text": row.get("user_input") or "", "tool_calls": []})
    for step in row.get("steps") or []:
        turns.append(
            {
                "role": f"{step.get('kind')} {step.get('name')}",
                "text": step.get("response") or step.get("error") or "",
                "tool_calls": [{"name": step.get("name"), "arguments": step.get("arguments")}],
            }
        )
    answer = (row.get("outcome") or {}).get("answer_text")
    if answer:
        turns.append({"role": "assistant", "text": answer, "tool_calls": []})
    return turns


def transcript_text(row: dict[str, Any]) -> str:
    """The transcript as plain text, one line per turn (the offline review sheet)."""
    lines = []
    for turn in transcript(row):
        parts = [f"[{turn['role']}]", turn["text"]]
        parts += [f"-> {c['name']}({c['arguments']})" for c in turn["tool_calls"]]
        lines.append(" ".join(p for p in parts if p))
    return "\n".join(lines)


def expected_text(row: dict[str, Any]) -> str:
    """The expected outcome in one short text: final state, actions, answer facts, source."""
    expected = row.get("expected") or {}
    if not expected:
        return ""
    parts = []
    if expected.get("final_state"):
        parts.append(f"final_state: {expected['final_state']}")
    for action in expected.get("actions") or []:
        parts.append(f"action: {action.get('name')}({action.get('arguments')})")
    for fact in expected.get("answer_facts") or []:
        parts.append(f"answer fact: {fact}")
    if expected.get("source"):
        parts.append(f"source: {expected['source']}")
    return "\n".join(parts)


def trust_reason(row: dict[str, Any]) -> str:
    """What earned the case its trust tier (the rules of ``filters/trust.py``)."""
    trust = row.get("trust")
    outcome = row.get("outcome") or {}
    expected = row.get("expected") or {}
    if trust == HUMAN:
        if expected.get("source") == "review":
            return "a reviewer corrected its expected outcome"
        return "a reviewer confirmed it"
    reward, state = outcome.get("reward"), outcome.get("final_state")
    wanted = expected.get("final_state")
    if trust == ORACLE:
        if expected.get("source") in ORACLE_SOURCES:
            return f"its expected outcome comes from the task definition ({expected['source']})"
        if wanted is not None and state == wanted:
            return f"it reached its recorded expected final state ({wanted})"
        return f"the run was rewarded (reward {reward})"
    failed = []
    if reward is not None and reward < 1:
        failed.append(f"reward {reward}")
    if wanted is not None and state != wanted:
        failed.append(f"final state {state} is not the expected {wanted}")
    if failed:
        return "selected by funnels only; a failed run (" + ", ".join(failed) + ")"
    return "selected by funnels only; no oracle or reviewer vouches for its outcome"


def steps(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Every recorded step with its arguments and response indented for reading."""
    out = []
    for step in row.get("steps") or []:
        out.append(
            {
                "seq": step.get("seq"),
                "kind": step.get("kind"),
                "name": step.get("name"),
                "occurrence": step.get("occurrence"),
                "status": step.get("status"),
                "system": step.get("system"),
                "is_mutating": step.get("is_mutating"),
                "latency_ms": step.get("latency_ms"),
                "arguments": pretty_json(step.get("arguments")),
                "response": pretty_json(step.get("response")),
                "error": step.get("error"),
            }
        )
    return out


def cluster_members(
    cluster_rows: list[dict[str, Any]], published: set[str]
) -> list[dict[str, Any]]:
    """The cluster's members in rank order, each with ``in_version`` (its case is published in
    this version, so the page can link it)."""
    members = sorted(cluster_rows, key=lambda m: (m.get("rank") is None, m.get("rank") or 0))
    keep = ("case_id", "role", "merged_by", "distance_to_representative", "rank")
    return [
        {**{k: m.get(k) for k in keep}, "in_version": m.get("case_id") in published}
        for m in members
    ]


def case_view(
    row: dict[str, Any],
    cluster_rows: list[dict[str, Any]],
    published: set[str],
    why_review: str = "",
    task: str | None = None,
) -> dict[str, Any]:
    """Everything the review page shows of one published case (``row``: a GOLDEN_SCHEMA row;
    ``cluster_rows``: its cluster's rows of clusters.parquet; ``published``: the version's
    case ids; ``why_review`` and ``task`` as the queue has them)."""
    outcome = row.get("outcome") or {}
    try:
        reasons = json.loads(row.get("funnel_reasons") or "{}")
    except ValueError:
        reasons = {}
    return {
        "case_id": row["case_id"],
        "request": row.get("user_input") or "",
        "intent": (row.get("intent") or {}).get("name"),
        "transcript": transcript(row),
        "steps": steps(row),
        "outcome": {k: outcome.get(k) for k in OUTCOME_FIELDS},
        "expected": row.get("expected"),
        "why": {
            "funnels": list(row.get("funnels") or []),
            "reasons": reasons if isinstance(reasons, dict) else {},
            "value_score": row.get("value_score"),
            "split": row.get("split"),
            "trust": row.get("trust"),
            "trust_reason": trust_reason(row),
            "why_review": why_review,
            "task": task,
        },
        "cluster": {
            "cluster_id": row.get("cluster_id"),
            "size": row.get("cluster_size"),
            "members": cluster_members(cluster_rows, published),
        },
    }
