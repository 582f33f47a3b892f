"""A fixed catalogue of boundary-level mutants: the faults a golden set should catch.

Each mutant is a faithful replay of the case (the re-issuing agent: every recorded call again,
in order, ending as the recording did) with one deliberate fault at a boundary: a write dropped,
made twice, swapped or moved; an amount, id or status argument changed; a tool the recording
never called; a read skipped; a different intent. ``strength.py`` replays every case under every
mutant that applies to it and counts the cases whose replay the gate fails (the mutant is
*killed*): the share killed is the set's strength.

A mutant plans from what the agent is given (``ReplayInput.baseline_calls``, the recorded intent
and outcome), so it runs as an ordinary agent through the ordinary runner; ``plan`` returns
``None`` when the case gives it nothing to change (no write to drop, no amount to alter), and
that case does not count for that mutant. Registering a mutant is one class with the
``@register`` decorator; names are stable (reports and configs use them).
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from golden_distill.datasets.replay.contract import (
    AgentResult,
    BaselineCall,
    ReplayInput,
    ToolCallError,
    ToolStub,
)
from golden_distill.datasets.replay.sandbox import is_id_key

#: The tool the ``unrecorded_tool`` mutant calls (no recording has it).
UNRECORDED_TOOL = "golden_mutant_unrecorded_tool"
_AMOUNT_KEY = re.compile(r"amount|price|total|cost|quantity|qty|value|balance|fee", re.I)
_STATUS_KEY = re.compile(r"^(?:status|state|.*_status|.*Status)$")


@dataclass(frozen=True, slots=True)
class Plan:
    """What the mutated agent does: these calls in this order, then this result."""

    calls: tuple[BaselineCall, ...]
    intent: str | None
    final_state: str | None
    answer: str | None


class Mutant:
    """One kind of fault. ``plan`` returns the mutated plan, or None when it does not apply."""

    name: ClassVar[str]
    describes: ClassVar[str]

    def plan(self, case: ReplayInput) -> Plan | None:
        raise NotImplementedError

    @staticmethod
    def faithful(case: ReplayInput) -> Plan:
        return Plan(
            case.baseline_calls, case.intent, case.recorded_final_state, case.recorded_answer
        )


MUTANTS: dict[str, type[Mutant]] = {}


def register(cls: type[Mutant]) -> type[Mutant]:
    MUTANTS[cls.name] = cls
    return cls


def _writes(case: ReplayInput) -> list[int]:
    return [i for i, c in enumerate(case.baseline_calls) if c.is_write]


def _distinct_writes(case: ReplayInput) -> list[int]:
    """Indexes of writes whose (tool, arguments) differ from the write before them."""
    out: list[int] = []
    for i in _writes(case):
        call = case.baseline_calls[i]
        if not out or (case.baseline_calls[out[-1]].name, case.baseline_calls[out[-1]].arguments) \
                != (call.name, call.arguments):  # fmt: skip
            out.append(i)
    return out


def _with_calls(case: ReplayInput, calls: list[BaselineCall]) -> Plan:
    return replace(Mutant.faithful(case), calls=tuple(calls))


@register
class DropWrite(Mutant):
    name = "drop_write"
    describes = "the first write is never made"

    def plan(self, case: ReplayInput) -> Plan | None:
        writes = _writes(case)
        if not writes:
            return None
        calls = list(case.baseline_calls)
        del calls[writes[0]]
        return _with_calls(case, calls)


@register
class DuplicateWrite(Mutant):
    name = "duplicate_write"
    describes = "the first write is made twice"

    def plan(self, case: ReplayInput) -> Plan | None:
        writes = _writes(case)
        if not writes:
            return None
        calls = list(case.baseline_calls)
        calls.insert(writes[0] + 1, calls[writes[0]])
        return _with_calls(case, calls)


@register
class SwapWrites(Mutant):
    name = "swap_writes"
    describes = "the first two different writes change places"

    def plan(self, case: ReplayInput) -> Plan | None:
        writes = _distinct_writes(case)
        if len(writes) < 2:
            return None
        calls = list(case.baseline_calls)
        a, b = writes[0], writes[1]
        calls[a], calls[b] = calls[b], calls[a]
        return _with_calls(case, calls)


@register
class ReorderWrites(Mutant):
    name = "reorder_writes"
    describes = "the first write is made last, after every other write (three or more)"

    def plan(self, case: ReplayInput) -> Plan | None:
        writes = _distinct_writes(case)
        if len(writes) < 3:
            return None
        calls = list(case.baseline_calls)
        first = calls.pop(writes[0])
        calls.insert(writes[-1], first)  # the last write moved up by one: insert after it
        return _with_calls(case, calls)


def _change_argument(
    case: ReplayInput, pick: Callable[[str, Any], bool], change: Callable[[Any], Any]
) -> Plan | None:
    """The first write (else the first call) holding an argument ``pick`` accepts, with that
    argument changed by ``change``."""
    order = _writes(case) + [i for i, c in enumerate(case.baseline_calls) if not c.is_write]
    for i in order:
        call = case.baseline_calls[i]
        arguments = copy.deepcopy(call.arguments)
        if _change_first(arguments, pick, change):
            calls = list(case.baseline_calls)
            calls[i] = replace(call, arguments=arguments)
            return _with_calls(case, calls)
    return None


def _change_first(
    value: Any, pick: Callable[[str, Any], bool], change: Callable[[Any], Any]
) -> bool:
    """Change the first picked ``key: value`` at any depth, in place; True when one was."""
    if isinstance(value, dict):
        for key, item in value.items():
            if pick(str(key), item):
                value[key] = change(item)
                return True
            if isinstance(item, dict | list) and _change_first(item, pick, change):
                return True
    elif isinstance(value, list):
        return any(_change_first(item, pick, change) for item in value)
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numeric_text(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"-?\d[\d,]*(?:\.\d+)?", value) is not None


@register
class ChangeAmount(Mutant):
    name = "change_amount"
    describes = "an amount argument (amount, price, total, quantity...) is 10% higher"

    def plan(self, case: ReplayInput) -> Plan | None:
        def pick(key: str, value: Any) -> bool:
            return bool(_AMOUNT_KEY.search(key)) and (_is_number(value) or _numeric_text(value))

        def change(value: Any) -> Any:
            number = float(str(value).replace(",", "")) if isinstance(value, str) else value
            bumped = round(number * 1.1, 2) if number else 1
            if isinstance(value, int) and not isinstance(value, bool) and bumped == int(bumped):
                bumped = int(bumped) if int(bumped) != value else value + 1
            return str(bumped) if isinstance(value, str) else bumped

        return _change_argument(case, pick, change)


@register
class ChangeId(Mutant):
    name = "change_id"
    describes = "an id argument names another entity"

    def plan(self, case: ReplayInput) -> Plan | None:
        def pick(key: str, value: Any) -> bool:
            return is_id_key(key) and isinstance(value, str | int) and not isinstance(value, bool)

        def change(value: Any) -> Any:
            if isinstance(value, int):
                return value + 1
            last = value[-1:] if value else ""
            swap = "1" if last != "1" else "2"
            if last.isalpha():
                swap = "B" if last != "B" else "C"
            return value[:-1] + swap if value else "X"

        return _change_argument(case, pick, change)


@register
class ChangeStatus(Mutant):
    name = "change_status"
    describes = "a status argument asks for another status"

    def plan(self, case: ReplayInput) -> Plan | None:
        def pick(key: str, value: Any) -> bool:
            return bool(_STATUS_KEY.match(key)) and isinstance(value, str) and bool(value)

        def change(value: Any) -> Any:
            other = "CANCELLED" if value.upper() != "CANCELLED" else "APPROVED"
            return other if value.isupper() else other.lower()

        return _change_argument(case, pick, change)


@register
class UnrecordedTool(Mutant):
    name = "unrecorded_tool"
    describes = "a tool the recording never called is called"

    def plan(self, case: ReplayInput) -> Plan | None:
        calls = list(case.baseline_calls)
        at = _writes(case)[0] if _writes(case) else len(calls)
        calls.insert(at, BaselineCall(-1, UNRECORDED_TOOL, {}, True))
        return _with_calls(case, calls)


def _ids(value: Any) -> set[str]:
    """String forms of the values under id-like keys, at any depth."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if is_id_key(str(key)) and isinstance(item, str | int) and not isinstance(item, bool):
                found.add(str(item))
            elif isinstance(item, dict | list):
                found |= _ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= _ids(item)
    return found


@register
class SkipRead(Mutant):
    name = "skip_read"
    describes = "a required read (of an entity a later write changes; else the first) is skipped"

    def plan(self, case: ReplayInput) -> Plan | None:
        calls = list(case.baseline_calls)
        reads = [i for i, c in enumerate(calls) if not c.is_write]
        if not reads:
            return None
        required = next(
            (
                i
                for i in reads
                if _ids(calls[i].arguments)
                and any(
                    _ids(calls[i].arguments) & _ids(later.arguments)
                    for later in calls[i + 1 :]
                    if later.is_write
                )
            ),
            reads[0],
        )
        del calls[required]
        return _with_calls(case, calls)


@register
class OtherIntent(Mutant):
    name = "other_intent"
    describes = "the agent answers with a different intent"

    def plan(self, case: ReplayInput) -> Plan | None:
        if not case.intent:
            return None
        return replace(Mutant.faithful(case), intent=f"not_{case.intent}")


def mutant_agent(mutant: Mutant) -> Callable[[ReplayInput, ToolStub], AgentResult]:
    """An agent that carries out ``mutant``'s plan of each case (the faithful plan when the
    mutant does not apply: the scorer leaves such cases out)."""

    def run(case: ReplayInput, tools: ToolStub) -> AgentResult:
        plan = mutant.plan(case) or Mutant.faithful(case)
        for call in plan.calls:
            with contextlib.suppress(ToolCallError):  # a recorded failure: the run goes on
                tools.call(call.name, call.arguments)
        return AgentResult(final_state=plan.final_state, answer=plan.answer, intent=plan.intent)

    run.__name__ = f"mutant_{mutant.name}"
    return run


def faithful_agent(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """The baseline: every recorded call again, the recorded outcome (full stubs)."""
    plan = Mutant.faithful(case)
    for call in plan.calls:
        with contextlib.suppress(ToolCallError):
            tools.call(call.name, call.arguments)
    return AgentResult(final_state=plan.final_state, answer=plan.answer, intent=plan.intent)
