"""The text-bearing fields of a case row that redaction visits, each with a setter.

Visited: ``user_input``; ``context.messages``, ``context.memory``, ``context.baseline_state``
(JSON); each retrieved chunk's ``text`` and ``query``; ``agent.prompt_variables`` (JSON: prompts
are often filled with customer data); each step's ``arguments``, ``response`` (JSON) and
``error`` (JSON or text); ``outcome.answer_text`` and ``outcome.handoff_reason``; the
``expected`` actions' ``arguments`` (JSON) and ``answer_facts`` (``expected.final_state``, like
``outcome.final_state``, is replaced by the redactor's known values). Never touched:
tool names, statuses, kinds, systems, numbers, timestamps, model params, env versions, source.
The row is copied on the way (only the nested parts that may change), so the caller's row is
never modified.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from golden_distill.redaction.walker import Slot, make_slot

Setter = Callable[[str], None]


def _setter(container: dict[str, Any], key: str) -> Setter:
    def put(value: str) -> None:
        container[key] = value

    return put


def case_slots(row: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[Slot, Setter]]]:
    """A shallow-copied row and its text slots (setters write into the copy)."""
    row = dict(row)
    slots: list[tuple[Slot, Setter]] = []

    def add(container: dict[str, Any], key: str, location: str, json_expected: bool) -> None:
        value = container.get(key)
        if isinstance(value, str) and value:
            slots.append((make_slot(location, value, json_expected), _setter(container, key)))

    add(row, "user_input", "user_input", False)
    if row.get("agent"):
        row["agent"] = agent = dict(row["agent"])
        add(agent, "prompt_variables", "agent.prompt_variables", True)
    if row.get("context"):
        row["context"] = context = dict(row["context"])
        for name in ("messages", "memory", "baseline_state"):
            add(context, name, f"context.{name}", True)
        chunks = [dict(c) for c in context.get("retrieved_chunks") or []]
        context["retrieved_chunks"] = chunks
        for i, chunk in enumerate(chunks):
            add(chunk, "text", f"context.retrieved_chunks[{i}].text", False)
            add(chunk, "query", f"context.retrieved_chunks[{i}].query", False)
    steps = [dict(s) for s in row.get("steps") or []]
    if row.get("steps") is not None:
        row["steps"] = steps
    for i, step in enumerate(steps):
        add(step, "arguments", f"steps[{i}].arguments", True)
        add(step, "response", f"steps[{i}].response", True)
        add(step, "error", f"steps[{i}].error", True)
    if row.get("outcome"):
        row["outcome"] = outcome = dict(row["outcome"])
        add(outcome, "answer_text", "outcome.answer_text", False)
        add(outcome, "handoff_reason", "outcome.handoff_reason", False)
    if row.get("expected"):
        # expected actions are walked like the recorded calls' arguments (same key rules, same
        # keyed pseudonyms), so an expected argument still equals the replayed call's
        row["expected"] = expected = dict(row["expected"])
        actions = [dict(a) for a in expected.get("actions") or []]
        expected["actions"] = actions
        for i, action in enumerate(actions):
            add(action, "arguments", f"expected.actions[{i}].arguments", True)
        facts = list(expected.get("answer_facts") or [])
        expected["answer_facts"] = facts
        for i, fact in enumerate(facts):
            if isinstance(fact, str) and fact:
                slot = make_slot(f"expected.answer_facts[{i}]", fact, False)
                slots.append((slot, _item_setter(facts, i)))
    return row, slots


def _item_setter(items: list[Any], index: int) -> Setter:
    def put(value: str) -> None:
        items[index] = value

    return put
