"""Agents for the replay tests: the re-issuing agent and one mutation each of what a regression
looks like (a dropped write, a changed amount, two writes swapped, an unrecorded tool, an added
read, another final state). Importable by name (``replay_agents:drop_write``) for the CLI."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any

from golden_distill.datasets.replay import AgentResult, ReplayInput, ToolCallError, ToolStub
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.replay.boundaries import ModelResponse, register_live

#: the version ``golden replay`` reports as ``new_version`` when ``--new-version`` is not given
__version__ = "9.9.0-test"

_AMOUNT = re.compile(r"amount|total|price", re.IGNORECASE)
UNRECORDED_TOOL = "zz_unrecorded_tool"


def _end(case: ReplayInput, **changes: Any) -> AgentResult:
    result = AgentResult(case.recorded_final_state, case.recorded_answer, case.intent)
    for key, value in changes.items():
        setattr(result, key, value)
    return result


def _call_all(tools: ToolStub, calls: list[tuple[str, Any]]) -> None:
    for name, arguments in calls:
        with contextlib.suppress(ToolCallError):
            tools.call(name, arguments)


def writes(case: ReplayInput) -> list[int]:
    return [i for i, c in enumerate(case.baseline_calls) if c.is_write]


def amount_path(value: Any) -> list[Any] | None:
    """The path to the first numeric amount-like leaf, if any."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _AMOUNT.search(str(key)) and isinstance(item, int | float) and item:
                return [key]
            sub = amount_path(item)
            if sub is not None:
                return [key, *sub]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            sub = amount_path(item)
            if sub is not None:
                return [i, *sub]
    return None


def _calls(case: ReplayInput) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in case.baseline_calls]


def drop_write(case: ReplayInput, tools: ToolStub) -> AgentResult:
    calls = _calls(case)
    first = writes(case)[0]
    _call_all(tools, calls[:first] + calls[first + 1 :])
    return _end(case)


def change_amount(case: ReplayInput, tools: ToolStub) -> AgentResult:
    import copy

    calls = _calls(case)
    for i in writes(case):
        path = amount_path(calls[i][1])
        if path is not None:
            args = copy.deepcopy(calls[i][1])
            holder = args
            for part in path[:-1]:
                holder = holder[part]
            holder[path[-1]] = holder[path[-1]] * 2 + 1
            calls[i] = (calls[i][0], args)
            break
    _call_all(tools, calls)
    return _end(case)


def swap_writes(case: ReplayInput, tools: ToolStub) -> AgentResult:
    calls = _calls(case)
    a, b = writes(case)[:2]
    calls[a], calls[b] = calls[b], calls[a]
    _call_all(tools, calls)
    return _end(case)


def unrecorded_tool(case: ReplayInput, tools: ToolStub) -> AgentResult:
    _call_all(tools, [*_calls(case), (UNRECORDED_TOOL, {"x": 1})])
    return _end(case)


def add_read(case: ReplayInput, tools: ToolStub) -> AgentResult:
    read = next(c for c in case.baseline_calls if not c.is_write)
    _call_all(tools, [*_calls(case), (read.name, read.arguments)])
    return _end(case)


def other_state(case: ReplayInput, tools: ToolStub) -> AgentResult:
    reissue(case, tools)
    return _end(case, final_state="SOMETHING_ELSE_ENTIRELY")


def lower_state(case: ReplayInput, tools: ToolStub) -> AgentResult:
    reissue(case, tools)
    return _end(case, final_state=(case.recorded_final_state or "").lower() or None)


def no_state(case: ReplayInput, tools: ToolStub) -> AgentResult:
    reissue(case, tools)
    return _end(case, final_state=None)


def drop_calls(seqs: dict[str, int]) -> Callable[[ReplayInput, ToolStub], AgentResult]:
    """An agent that re-issues each case's recorded calls except the one at recorded step
    ``seqs[case_id]`` (e.g. a write the task expected)."""

    def agent(case: ReplayInput, tools: ToolStub) -> AgentResult:
        drop = seqs.get(case.case_id)
        _call_all(tools, [(c.name, c.arguments) for c in case.baseline_calls if c.seq != drop])
        return _end(case)

    return agent


def change_read(case_ids: set[str]) -> Callable[[ReplayInput, ToolStub], AgentResult]:
    """An agent that re-issues the recorded calls, except that in the cases ``case_ids`` the
    first read's first text argument gets a suffix (a medium parameter diff, no escape)."""

    def agent(case: ReplayInput, tools: ToolStub) -> AgentResult:
        calls = _calls(case)
        if case.case_id in case_ids:
            for i, call in enumerate(case.baseline_calls):
                args = call.arguments
                if not call.is_write and isinstance(args, dict):
                    key = next((k for k, v in args.items() if isinstance(v, str)), None)
                    if key is not None:
                        calls[i] = (call.name, {**args, key: args[key] + "-changed"})
                        break
        _call_all(tools, calls)
        return _end(case)

    return agent


WRONG = "\u00a7"  # what a wrong fact is replaced by (matches no fact)


def wrong_facts(facts: dict[str, list[str]]) -> Callable[[ReplayInput, ToolStub], AgentResult]:
    """An agent that re-issues the recorded calls and answers as recorded, except that every
    occurrence of the facts ``facts[case_id]`` is replaced by something else."""

    def agent(case: ReplayInput, tools: ToolStub) -> AgentResult:
        reissue(case, tools)
        answer = case.recorded_answer or ""
        for fact in facts.get(case.case_id, []):
            answer = re.sub(re.escape(fact), WRONG, answer, flags=re.IGNORECASE)
        return _end(case, answer=answer)

    return agent


__all__ = ["add_read", "change_amount", "change_read", "drop_calls", "drop_write", "lower_state",
           "no_state", "other_state", "reissue", "swap_writes", "unrecorded_tool",
           "wrong_facts"]  # fmt: skip


# -- broken agents (usage errors) and agents for the tolerance / repeat / boundary tests ---------


async def async_reissue(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """The re-issuing agent written ``async def``, calling tools with ``acall``."""
    for call in case.baseline_calls:
        with contextlib.suppress(ToolCallError):
            await tools.acall(call.name, call.arguments)  # type: ignore[attr-defined]
    return _end(case)


def returns_coroutine(case: ReplayInput, tools: ToolStub) -> Any:
    """A plain function handing back an un-awaited coroutine."""
    return async_reissue(case, tools)


def returns_generator(case: ReplayInput, tools: ToolStub) -> Any:
    yield _end(case)


def returns_dict(case: ReplayInput, tools: ToolStub) -> Any:
    reissue(case, tools)
    return {"final_state": case.recorded_final_state}


def always_raises(case: ReplayInput, tools: ToolStub) -> AgentResult:
    return {}["no such key"]  # type: ignore[no-any-return]


_FLAKY_CALLS = [0]


def flaky(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """Skips its last call on every third replay (a global counter: outside what the replay
    seeds, as real nondeterminism is)."""
    _FLAKY_CALLS[0] += 1
    calls = _calls(case)
    if _FLAKY_CALLS[0] % 3 == 0 and calls:
        calls = calls[:-1]
    _call_all(tools, calls)
    return _end(case)


def _amounts_as_text(value: Any, separators: bool) -> Any:
    if isinstance(value, dict):
        return {
            k: (f"{v:,}" if separators else str(v))
            if _AMOUNT.search(str(k)) and isinstance(v, int | float) and not isinstance(v, bool)
            else _amounts_as_text(v, separators)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_amounts_as_text(v, separators) for v in value]
    return value


def amounts_as_text(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """Writes amounts as text, as an LLM often does: "1905.77" or "1,905.77" (alternating)."""
    calls = [
        (c.name, _amounts_as_text(c.arguments, i % 2 == 0) if c.is_write else c.arguments)
        for i, c in enumerate(case.baseline_calls)
    ]
    _call_all(tools, calls)
    return _end(case)


def _currency(case: ReplayInput) -> str | None:
    for call in case.baseline_calls:
        if isinstance(call.arguments, dict) and isinstance(call.arguments.get("currency"), str):
            return call.arguments["currency"]
    return None


def added_currency(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """Adds the case's recorded currency to every write that lacks one."""
    currency = _currency(case)
    calls = [
        (c.name, {**c.arguments, "currency": currency})
        if currency and c.is_write and isinstance(c.arguments, dict)
        and "currency" not in c.arguments
        else (c.name, c.arguments)
        for c in case.baseline_calls
    ]  # fmt: skip
    _call_all(tools, calls)
    return _end(case)


# -- model and route boundaries ------------------------------------------------------------------

LIVE_CALLS: list[str] = []


@register_live("llm")
def live_llm(messages: Any, **params: Any) -> ModelResponse:
    LIVE_CALLS.append("llm")
    return ModelResponse("a live answer", tokens=7, finish_reason="stop")


@register_live("erp_refund")
def live_refund(arguments: Any) -> Any:  # a write: never called, the sandbox takes writes
    LIVE_CALLS.append("erp_refund")
    return {"refunded": "live"}


def token_hungry(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """Makes the recorded calls and reports far more tokens than were recorded."""
    reissue(case, tools)
    return _end(case, tokens=10**9)


def model_agent(case: ReplayInput, tools: Any) -> AgentResult:
    """Plans with the model, asks the router, makes the recorded tool calls, answers with the
    model: every boundary through the stubs."""
    messages = [{"role": "user", "content": case.user_input}]
    plan = tools.llm.complete(messages, model=case.model_name, temperature=0)
    queue = tools.route("triage", {"text": case.user_input})
    _call_all(tools, _calls(case))
    final = tools.llm.complete([*messages, {"role": "assistant", "content": plan.content}])
    tokens = (plan.tokens or 0) + (final.tokens or 0)
    return AgentResult(case.recorded_final_state, final.content, queue, tokens)
