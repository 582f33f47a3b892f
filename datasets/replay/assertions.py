"""The three assertion layers over one replayed case; every difference becomes a ``Diff``.

* Layer 1, tool sequence: every recorded call is made (tool-set coverage: a call never made is
  ``missing_call``, a call with no recorded counterpart ``extra_call``), writes happen in the
  recorded causal order, and the call ratio replay/recording stays within the configured band.
* Layer 2, parameter parity: each replayed call is aligned with a recorded one (the stub's match,
  else the tool's next unaligned recording); ids and amounts must be equal (after the stage-2
  normal form), query-like text similar (rapidfuzz ratio >= threshold).
* Layer 3, outcome: the final state equals the expected one (``expected.final_state``, else the
  recorded final state); where ``expected.actions`` say which writes the case must make, the
  replay's successful writes are checked against them (``expected_actions``: an expected write
  the recording made and the replay does not is ``missing_call``, an unexpected write the
  recording did not make ``extra_call``; one row per write: a write layers 1-2 already reported
  gets that row's detail extended), and the case converges only when both hold; intent and
  answer compared too: the answer facts the recorded answer held must still be in the new answer
  (facts the recording missed are not a regression), and without facts the answer must stay
  similar to the recorded one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from rapidfuzz import fuzz

from golden_distill.datasets.canonical_json import canonical_json
from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.replay.config import ReplayConfig
from golden_distill.datasets.replay.contract import AgentResult
from golden_distill.datasets.replay.diffs import Diff, severity_of
from golden_distill.datasets.replay.expected_actions import (
    ActionCheck,
    check_expected_actions,
    checks_actions,
)
from golden_distill.datasets.replay.normalise import Normaliser
from golden_distill.datasets.replay.stubs import ESCAPE, EXACT, ServedCall, VirtualTools, parse_json

_SHOWN_CHARS = 4000


@dataclass(slots=True)
class CaseCheck:
    """The diffs of one case and the counts the gate adds up over the run."""

    case_id: str
    diffs: list[Diff] = field(default_factory=list)
    aligned: int = 0  # aligned (recorded, replayed) call pairs
    aligned_equal: int = 0  # ... whose parameters are equal
    recorded_calls: int = 0
    replayed_calls: int = 0
    recorded_tokens: int | None = None
    replayed_tokens: int | None = None
    final_state_checked: bool = False
    final_state_ok: bool = True
    stub_escapes: int = 0


def show_call(name: str, arguments: Any) -> str:
    text = f"{name}({orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()})"
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


class CaseAsserter:
    def __init__(self, config: ReplayConfig) -> None:
        self.config = config
        self.normaliser = Normaliser(config.matching)
        self.query_keys = frozenset(k.lower() for k in config.assertions.query_keys)

    def check(
        self,
        case: Case,
        tools: VirtualTools,
        result: AgentResult | None,
        agent_error: str | None = None,
    ) -> CaseCheck:
        check = CaseCheck(case.case_id)
        baseline = tools.steps
        log = tools.log
        check.recorded_calls, check.replayed_calls = len(baseline), len(log)

        def add(kind: str, detail: str, *, write: bool = False, **sides: Any) -> Diff:
            severity = severity_of(kind, write, self.config.severity)
            diff = Diff(case.case_id, case.trace_id, kind, detail, severity, write, **sides)
            check.diffs.append(diff)
            return diff

        with_actions = checks_actions(case.expected)
        if _as_recorded(baseline, log):  # every call exact, once, in recorded order
            check.aligned = check.aligned_equal = len(log)
            # the recorded writes again, served as recorded: the expected actions fare the same
            self._outcome(case, result, agent_error, check, add, with_actions)
            self._tokens(case, result, check)
            return check
        step_rows: dict[int, Diff] = {}  # recorded seq -> its layer 1-2 row
        call_rows: dict[int, Diff] = {}  # replayed call index -> its layer 1-2 row
        pairs, missing, extra = _align(baseline, log)
        # layer 1: coverage, extra calls, escapes, write order, call ratio
        for call in log:
            if call.match == ESCAPE:
                check.stub_escapes += 1
                add("stub_escape", f"{call.name}: no recording of this tool",
                    replayed=show_call(call.name, call.arguments))  # fmt: skip
        for step in missing:
            write = tools.is_write(step.name)
            step_rows[step.seq] = add(
                "missing_call", f"{step.name} (recorded step {step.seq}) was never called",
                write=write, recorded=show_call(step.name, parse_json(step.arguments)))  # fmt: skip
        for call in extra:
            call_rows[call.index] = add(
                "extra_call", f"{call.name} (call {call.index + 1}) has no recorded counterpart",
                write=call.is_write, replayed=show_call(call.name, call.arguments))  # fmt: skip
        # write order: the replayed writes (as the recorded calls they align with) must be a
        # subsequence of the recorded writes; identical calls are interchangeable, and a write
        # never made is a missing_call, not an order change
        replayed_writes = [s for s, c in sorted(pairs, key=lambda p: p[1].index) if c.is_write]
        recorded_writes = [s for s in baseline if tools.is_write(s.name)]
        if not _is_subsequence([_sig(s) for s in replayed_writes],
                               [_sig(s) for s in recorded_writes]):  # fmt: skip
            add("tool_seq_diff", "writes out of recorded order", write=True,
                recorded=", ".join(s.name for s in recorded_writes),
                replayed=", ".join(s.name for s in replayed_writes))  # fmt: skip
        bounds = self.config.assertions
        if baseline:
            ratio = len(log) / len(baseline)
            if not bounds.min_step_ratio <= ratio <= bounds.max_step_ratio:
                add("tool_seq_diff", f"call ratio {ratio:.2f} outside "
                    f"[{bounds.min_step_ratio}, {bounds.max_step_ratio}]",
                    recorded=str(len(baseline)), replayed=str(len(log)))  # fmt: skip
        # layer 2: parameter parity of aligned calls (and what they were served)
        for step, call in pairs:
            check.aligned += 1
            # an exact match has equal canonical arguments: nothing to compare
            exact = call.recorded_seq == step.seq and call.match == EXACT
            differing = [] if exact else self.param_differences(step, call, tools.volatile)
            if differing:
                step_rows[step.seq] = call_rows[call.index] = add(
                    "tool_param_diff", f"{step.name}: {', '.join(differing)} differ",
                    write=call.is_write,
                    recorded=show_call(step.name, parse_json(step.arguments)),
                    replayed=show_call(call.name, call.arguments))  # fmt: skip
                continue
            check.aligned_equal += 1
            if call.recorded_seq != step.seq and call.response != step.response:
                add("tool_output_diff", f"{step.name}: served {call.match} response",
                    recorded=step.response, replayed=call.response)  # fmt: skip
        # layer 3: outcome (expected writes, final state, intent, answer)
        actions = None
        if with_actions:
            actions = check_expected_actions(
                case.expected, baseline, log, tools.is_write, self.normaliser, tools.volatile
            )
            aligned = {step.seq: call for step, call in pairs}
            self._action_rows(actions, step_rows, call_rows, aligned, add)
        self._outcome(case, result, agent_error, check, add, with_actions, actions)
        self._tokens(case, result, check)
        return check

    @staticmethod
    def _action_rows(
        actions: ActionCheck,
        step_rows: dict[int, Diff],
        call_rows: dict[int, Diff],
        aligned: dict[int, ServedCall],
        add: Any,
    ) -> None:
        """One row per expected-write difference; a write layers 1-2 already reported (never
        made, made with other parameters, made with no recorded counterpart) keeps its row,
        which says what the write was expected to do. An expected write made in the recording's
        place but with other key arguments (which layer 2 forgave) is one ``tool_param_diff``."""
        extra = {call.index: call for call in actions.extra}
        for action, step in actions.missing:
            row = step_rows.get(step.seq)
            expected_call = show_call(action.name, parse_json(action.arguments))
            call = aligned.get(step.seq)
            if row is not None:
                row.detail += "; an expected action"
            elif call is not None and extra.pop(call.index, None) is not None:
                add("tool_param_diff", f"{action.name}: key arguments of an expected action "
                    "differ", write=True, recorded=expected_call,
                    replayed=show_call(call.name, call.arguments))  # fmt: skip
            else:
                add("missing_call", f"expected action {action.name} not made", write=True,
                    recorded=expected_call)  # fmt: skip
        for call in extra.values():
            row = call_rows.get(call.index)
            if row is not None:
                row.detail += "; not an expected action"
            else:
                add("extra_call", f"{call.name} (call {call.index + 1}) is not an expected action",
                    write=True, replayed=show_call(call.name, call.arguments))  # fmt: skip
        for index in actions.newly_met:
            row = call_rows.get(index)
            if row is not None:
                row.detail += "; meets an expected action the recording missed"

    @staticmethod
    def _tokens(case: Case, result: AgentResult | None, check: CaseCheck) -> None:
        known = [s.tokens for s in case.steps if s.tokens is not None]
        check.recorded_tokens = sum(known) if known else None
        check.replayed_tokens = result.tokens if result is not None else None

    def param_differences(
        self, step: Step, call: ServedCall, volatile: frozenset[str]
    ) -> list[str]:
        """Paths whose values differ (after the normal form; query-like text by similarity)."""
        left = orjson.loads(canonical_json(parse_json(step.arguments), volatile))
        right = orjson.loads(call.canonical)
        left, right = self.normaliser.pair(step.name, left, right)
        out: list[str] = []
        self._diff(left, right, "", None, out)
        return out

    def _diff(self, left: Any, right: Any, path: str, key: str | None, out: list[str]) -> None:
        if isinstance(left, dict) and isinstance(right, dict):
            for k in sorted(set(left) | set(right)):
                sub = f"{path}.{k}" if path else k
                if k not in left or k not in right:
                    out.append(sub)
                else:
                    self._diff(left[k], right[k], sub, k, out)
            return
        if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
            for i, (a, b) in enumerate(zip(left, right, strict=True)):
                self._diff(a, b, f"{path}[{i}]", key, out)
            return
        if (
            key is not None
            and key.lower() in self.query_keys
            and isinstance(left, str)
            and isinstance(right, str)
        ) and fuzz.ratio(left, right) >= self.config.assertions.query_similarity:
            return
        if left != right:
            out.append(path or "arguments")

    def _outcome(
        self,
        case: Case,
        result: AgentResult | None,
        agent_error: str | None,
        check: CaseCheck,
        add: Any,
        with_actions: bool = False,
        actions: ActionCheck | None = None,
    ) -> None:
        expected = case.expected
        state = expected.final_state if expected and expected.final_state else None
        state = state or case.outcome.final_state
        if with_actions:  # the expected writes are the final state's other half (tau-bench's)
            check.final_state_checked = True
            check.final_state_ok = actions is None or actions.ok
        if state is not None or agent_error is not None:
            check.final_state_checked = True
            got = None if result is None else result.final_state
            if result is None or got != state:
                check.final_state_ok = False
                detail = f"agent raised {agent_error}" if agent_error else "final state differs"
                add("final_state_diff", detail, recorded=state, replayed=got)
        if result is None:
            return
        if result.intent is not None and case.intent.name and result.intent != case.intent.name:
            add("intent_diff", "intent differs", recorded=case.intent.name, replayed=result.intent)
        if result.answer == case.outcome.answer_text:  # holds every fact the recording held
            return
        threshold = self.config.assertions.answer_similarity
        answer = (result.answer or "").casefold()
        # a regression gate: the facts the recorded answer held must still be there
        recorded_answer = (case.outcome.answer_text or "").casefold()
        facts = [
            f
            for f in (expected.answer_facts if expected else [])
            if fuzz.partial_ratio(f.casefold(), recorded_answer) >= threshold
        ]
        for fact in facts:
            if fuzz.partial_ratio(fact.casefold(), answer) < threshold:
                add("answer_diff", "answer misses an expected fact", recorded=fact,
                    replayed=result.answer)  # fmt: skip
        recorded = case.outcome.answer_text
        if (
            not facts
            and self.config.assertions.compare_answer_text
            and recorded
            and result.answer is not None
            and fuzz.ratio(recorded.casefold(), answer) < threshold
        ):
            add("answer_diff", "answer differs from the recorded one", recorded=recorded,
                replayed=result.answer)  # fmt: skip


def _as_recorded(baseline: list[Step], log: list[ServedCall]) -> bool:
    """The common case, checked cheaply: the replay made exactly the recorded calls, in order,
    each an exact match (then layers 1 and 2 can find nothing)."""
    if len(log) != len(baseline):
        return False
    for c, s in zip(log, baseline, strict=True):
        if c.match != EXACT or c.recorded_seq != s.seq:
            return False
    return True


def _sig(step: Step) -> tuple[str, str | None]:
    return step.name, step.canonical_args_sha256 or step.arguments


def _is_subsequence(part: list[Any], whole: list[Any]) -> bool:
    items = iter(whole)
    return all(any(x == y for y in items) for x in part)


def _align(
    baseline: list[Step], log: list[ServedCall]
) -> tuple[list[tuple[Step, ServedCall]], list[Step], list[ServedCall]]:
    """(recorded, replayed) pairs; recorded calls never made; replayed calls with no partner."""
    by_seq = {s.seq: s for s in baseline}
    taken: set[int] = set()
    pairs: list[tuple[Step, ServedCall]] = []
    loose: list[ServedCall] = []
    for call in log:
        if call.match == ESCAPE:
            continue
        if call.recorded_seq is not None and call.recorded_seq not in taken:
            taken.add(call.recorded_seq)
            pairs.append((by_seq[call.recorded_seq], call))
        else:
            loose.append(call)
    extra = []
    for call in loose:
        partner = next((s for s in baseline if s.name == call.name and s.seq not in taken), None)
        if partner is None:
            extra.append(call)
        else:
            taken.add(partner.seq)
            pairs.append((partner, call))
    missing = [s for s in baseline if s.seq not in taken]
    return pairs, missing, extra
