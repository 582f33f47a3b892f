"""Layer 3, outcome: the expected writes and the final state.

**Expected writes** (``expected.actions``, see ``expected_actions``): an expected write the
recording made and the replay does not is ``missing_call``, an unexpected write the recording
did not make ``extra_call``; one row per write (a write layers 1-2 already reported gets that
row's detail extended).

**Final state**, in this order of preference (the row says which was used):

1. a case with expected writes (tau-bench's task actions: its grader compares the database the
   writes leave) is judged on them, relative to the recording (above);
2. else on the state the writes leave whenever one can be derived (the case has a baseline
   state or a recorded successful write; ``sandbox``): the baseline after the replayed writes
   must equal the baseline after the recorded writes, entity by entity, and hold what
   ``expected.final_state`` says when that is a JSON object of entities;
3. only when no state can be derived, or when ``expected.final_state`` is a label other than
   the recorded one (a reviewer's correction: the recording did not reach it, so no state
   derived from it can tell), the agent's final-state label against the expected (else the
   recorded) one, ignoring case and spacing; an agent that reports no label is not judged.
"""

from __future__ import annotations

from typing import Any

from golden_distill.datasets.replay.checks.base import Check, CheckContext, show_call
from golden_distill.datasets.replay.diffs import Diff
from golden_distill.datasets.replay.expected_actions import check_expected_actions, checks_actions
from golden_distill.datasets.replay.sandbox import State, baseline_state, state_differences
from golden_distill.datasets.replay.stubs import parse_json

STATE, LABEL, EXPECTED_WRITES = "state", "label", "expected_writes"


class ExpectedWrites(Check):
    name = "expected_writes"
    on_fast_path = True

    def run(self, ctx: CheckContext) -> list[Diff]:
        case = ctx.case
        if not checks_actions(case.expected):
            return []
        ctx.check.final_state_checked = True
        ctx.check.final_state_basis = EXPECTED_WRITES
        if ctx.as_recorded:  # the recorded writes again: the expected actions fare the same
            return []
        actions = check_expected_actions(case.expected, ctx.baseline, ctx.log, ctx.tools.is_write,
                                         self.normaliser, ctx.tools.volatile)  # fmt: skip
        if not actions.ok:
            ctx.check.final_state_ok = False
        pairs, _, _ = ctx.alignment
        aligned = {step.seq: call for step, call in pairs}
        extra = {call.index: call for call in actions.extra}
        out: list[Diff] = []
        for action, step in actions.missing:
            row = ctx.rows_of_step(step.seq)
            expected_call = show_call(action.name, parse_json(action.arguments))
            call = aligned.get(step.seq)
            if row is not None:
                row.detail += "; an expected action"
            elif call is not None and extra.pop(call.index, None) is not None:
                out.append(ctx.diff(
                    "tool_param_diff", f"{action.name}: key arguments of an expected action "
                    "differ", write=True, recorded=expected_call, tool=action.name,
                    position=f"replayed call {call.index + 1}",
                    replayed=show_call(call.name, call.arguments)))  # fmt: skip
            else:
                out.append(ctx.diff(
                    "missing_call", f"expected action {action.name} not made", write=True,
                    recorded=expected_call, tool=action.name))  # fmt: skip
        for call in extra.values():
            row = ctx.rows_of_call(call.index)
            if row is not None:
                row.detail += "; not an expected action"
            else:
                where = f"replayed call {call.index + 1}"
                out.append(ctx.diff(
                    "extra_call", f"{call.name} ({where}) is not an expected action",
                    write=True, tool=call.name, position=where,
                    replayed=show_call(call.name, call.arguments)))  # fmt: skip
        for index in actions.newly_met:
            row = ctx.rows_of_call(index)
            if row is not None:
                row.detail += "; meets an expected action the recording missed"
        return out


class FinalState(Check):
    name = "final_state"
    on_fast_path = True

    def run(self, ctx: CheckContext) -> list[Diff]:
        check, tools = ctx.check, ctx.tools
        if ctx.agent_error is not None:
            check.final_state_checked, check.final_state_ok = True, False
            check.final_state_basis = "agent"
            return [ctx.diff("final_state_diff", f"agent raised {ctx.agent_error}")]
        if checks_actions(ctx.case.expected):
            return []  # judged on the expected writes (ExpectedWrites)
        if _corrected_label(ctx):
            return self._label(ctx)  # the expectation says more than the recording
        if ctx.as_recorded and tools.baseline is not None:
            check.final_state_checked, check.final_state_basis = True, STATE
            return []  # the recorded writes, served as recorded: the recorded state
        if tools.has_state():
            check.final_state_checked, check.final_state_basis = True, STATE
            return [] if ctx.as_recorded else self._state(ctx)
        return self._label(ctx)

    def _compare(self, ctx: CheckContext) -> Any:
        defaults = ctx.tools.recorded_defaults

        def compare(before: Any, after: Any) -> tuple[list[str], set[str]]:
            found = self.normaliser.compare("", before, after, defaults)
            return found.differing, found.tolerances

        return compare

    def _state(self, ctx: CheckContext) -> list[Diff]:
        tools, check = ctx.tools, ctx.check
        recorded, replayed = tools.recorded_state(), tools.replayed_state()
        compare = self._compare(ctx)
        lines, tolerances, entities = state_differences(recorded, replayed, compare)
        out = []
        if lines:
            check.final_state_ok = False
            out.append(ctx.diff(
                "final_state_diff", f"final state differs from the recorded writes' state in "
                f"{len(lines)} place(s) (judged on the state): " + "; ".join(lines[:3]),
                recorded=_show_state(recorded), replayed=_show_state(replayed),
                tolerances=tuple(sorted(tolerances)), position="entities " + ", ".join(entities),
                extra={"basis": STATE, "lines": lines}))  # fmt: skip
        expected = _expected_state(ctx)
        if expected is not None:
            missed = _unmet(expected, replayed, compare)
            if missed and not _unmet(expected, recorded, compare):
                check.final_state_ok = False
                out.append(ctx.diff(
                    "final_state_diff", "final state misses the expected state (judged on the "
                    "state): " + "; ".join(missed[:3]), recorded=_show_state(expected),
                    replayed=_show_state(replayed),
                    extra={"basis": STATE, "lines": missed}))  # fmt: skip
        return out

    def _label(self, ctx: CheckContext) -> list[Diff]:
        case, result, check = ctx.case, ctx.result, ctx.check
        expected = case.expected.final_state if case.expected else None
        label = expected or case.outcome.final_state
        got = None if result is None else result.final_state
        if label is None or got is None:
            return []  # nothing to compare with, or the agent reports no label
        check.final_state_checked, check.final_state_basis = True, LABEL
        if _fold(label) == _fold(got):
            return []
        check.final_state_ok = False
        return [ctx.diff(
            "final_state_diff", "final-state label differs (no state could be derived: judged "
            "on the agent's label)", recorded=label, replayed=got,
            extra={"basis": LABEL})]  # fmt: skip


def _corrected_label(ctx: CheckContext) -> bool:
    """``expected.final_state`` is a label other than the recorded one (a reviewer's
    correction): the recording did not reach the expected outcome, so no state derived from it
    can say whether the replay does; the agent's label is compared with the expected one."""
    expected = ctx.case.expected.final_state if ctx.case.expected else None
    if not expected or expected.lstrip().startswith("{"):
        return False
    recorded = ctx.case.outcome.final_state
    return recorded is not None and _fold(expected) != _fold(recorded)


def _fold(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _show_state(state: State) -> str:
    import orjson

    text = orjson.dumps(state, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2, default=str)
    return text.decode()[:4000]


def _expected_state(ctx: CheckContext) -> State | None:
    """``expected.final_state`` when it is a JSON object of entities (else it is a label)."""
    text = ctx.case.expected.final_state if ctx.case.expected else None
    if not text or not text.lstrip().startswith("{"):
        return None
    value = parse_json(text)
    return baseline_state(text) if isinstance(value, dict) else None


def _unmet(expected: State, state: State, compare: Any) -> list[str]:
    """Expected entity fields ``state`` does not hold (fields it does not name are free)."""
    out = []
    for key, fields in sorted(expected.items()):
        got = state.get(key)
        if got is None:
            out.append(f"{key}: absent")
            continue
        for name, value in fields.items():
            differing, _ = compare({name: value}, {name: got.get(name)})
            if differing:
                out.append(f"{key}.{name}: expected {value!r}, replayed {got.get(name)!r}")
    return out
