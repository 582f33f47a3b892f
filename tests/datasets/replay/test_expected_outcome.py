"""Layer 3 against the expected outcome the golden set carries (tau-bench's task ``actions`` and
``outputs`` on the set published from the vendored runs): the re-issuing agent passes with zero
diffs while every case's expected writes are checked; dropping an expected write or giving a
wrong answer fact yields exactly the rows and the exit code that implies; key arguments that
layer 2 forgives are still caught; an expectation the recording missed is no regression."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import replay_agents as agents

from golden_distill.datasets.canonical_json import canonical_args_sha256, canonical_json
from golden_distill.datasets.case import Case, Expected, ExpectedAction, Outcome, Step
from golden_distill.datasets.reader import GoldenSet, open_set
from golden_distill.datasets.replay import ReplayConfig, replay_case, replay_cases
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.replay.expected_actions import checks_actions
from golden_distill.datasets.replay.runner import ReplayRun
from golden_distill.datasets.replay.stubs import TOOL_KINDS

CONFIG = ReplayConfig()


@pytest.fixture(scope="module")
def tau(tau_set) -> GoldenSet:
    return open_set(*tau_set)


@pytest.fixture(scope="module")
def tau_cases(tau: GoldenSet) -> list[Case]:
    return [c.case for c in tau.cases()]


def _run(golden: GoldenSet, cases: list[Case], agent) -> ReplayRun:
    return replay_cases(
        cases, agent, CONFIG, baseline_version=golden.version, volatile_keys=golden.volatile_keys
    )


def _rows(run: ReplayRun) -> dict[str, Counter]:
    return {
        r.case.case_id: Counter((d.diff_type, d.severity) for d in r.check.diffs) for r in run.runs
    }


def _signature(step) -> tuple[str, str]:
    return step.name, canonical_json(json.loads(step.arguments)).decode()


def _expected_writes_made(case: Case) -> list[int]:
    """Recorded steps (seq) of successful writes that are, verbatim, one of the task's expected
    actions, and unique among the case's calls (dropping one leaves no identical twin)."""
    expected = {(a.name, a.arguments) for a in case.expected.actions}
    tools = [s for s in case.steps if s.kind in TOOL_KINDS]
    counts = Counter(_signature(s) for s in tools)
    return [
        s.seq
        for s in tools
        if s.is_mutating and s.status == "ok" and _signature(s) in expected
        and counts[_signature(s)] == 1
    ]  # fmt: skip


def test_reissuing_agent_passes_with_every_expected_write_checked(tau, tau_cases) -> None:
    with_actions = [c for c in tau_cases if checks_actions(c.expected)]
    assert len(with_actions) > 200  # tau-bench tasks: expected writes on (nearly) every case
    run = _run(tau, tau_cases, reissue)
    assert [d for r in run.runs for d in r.check.diffs] == []
    assert run.exit_code == 0 and run.gate.verdict == "pass"
    checked = {r.case.case_id for r in run.runs if r.check.final_state_checked}
    assert checked == {c.case_id for c in with_actions}  # the expected writes are the outcome
    assert run.figures["final_state_convergence"] == 1.0
    # and they are the recorded calls of the successful runs (pseudonyms and canonical form kept)
    made = sum(bool(_expected_writes_made(c)) for c in with_actions if c.outcome.reward == 1.0)
    assert made > 100


def test_dropping_an_expected_tau_bench_write(tau, tau_cases) -> None:
    drops = {}
    for case in tau_cases:
        if checks_actions(case.expected) and (seqs := _expected_writes_made(case)):
            drops[case.case_id] = seqs[0]
    assert len(drops) > 100
    cases = [c for c in tau_cases if c.case_id in drops]
    run = _run(tau, cases, agents.drop_calls(drops))
    for r in run.runs:
        n = sum(1 for s in r.case.steps if s.kind in TOOL_KINDS)
        band = CONFIG.assertions
        ratio_row = (
            Counter()
            if band.min_step_ratio <= (n - 1) / n
            else Counter({("tool_seq_diff", "medium"): 1})
        )
        assert _rows(run)[r.case.case_id] == Counter({("missing_call", "high"): 1}) + ratio_row
        (missing,) = [d for d in r.check.diffs if d.diff_type == "missing_call"]
        assert missing.detail.endswith("was never called; an expected action")
        recorded = sorted(s.seq for s in r.case.steps if s.kind in TOOL_KINDS)
        position = recorded.index(drops[r.case.case_id]) + 1  # 1-based, among the tool calls
        assert missing.detail.startswith(f"{missing.tool} (recorded call {position})")
        assert missing.position == f"recorded call {position}"
        assert r.check.final_state_checked and not r.check.final_state_ok
    assert run.figures["final_state_convergence"] == 0.0
    assert run.exit_code == 1
    crossed = [x.name for x in run.gate.lines if x.crossed and x.fails]
    assert crossed == ["write_diffs", "final_state_convergence"]


def test_a_wrong_answer_fact_is_a_low_answer_diff(tau, tau_cases) -> None:
    facts = {}
    for case in tau_cases:
        answer = (case.outcome.answer_text or "").casefold()
        held = [f for f in case.expected.answer_facts if f.casefold() in answer]
        if held:
            facts[case.case_id] = held
    assert len(facts) >= 15
    cases = [c for c in tau_cases if c.case_id in facts]
    run = _run(tau, cases, agents.wrong_facts(facts))
    for r in run.runs:
        want = len(facts[r.case.case_id])
        assert _rows(run)[r.case.case_id] == Counter({("answer_diff", "low"): want})
        recorded = sorted(d.recorded for d in r.check.diffs)
        assert recorded == sorted(facts[r.case.case_id])
        assert all(agents.WRONG in d.replayed for d in r.check.diffs)
    # an answer is no red line (severity low): the gate passes, the rows are the finding
    assert run.exit_code == 0 and run.gate.verdict == "pass"
    # the same agent keeping the facts: nothing to report
    same = _run(tau, cases, agents.wrong_facts({}))
    assert [d for r in same.runs for d in r.check.diffs] == []


# -- expected writes on small hand-made cases ---------------------------------------------------


def _step(seq: int, name: str, args: dict, response: str, write: bool) -> Step:
    text = json.dumps(args)
    return Step(
        seq=seq, kind="tool", name=name, occurrence=1, arguments=text,
        canonical_args_sha256=canonical_args_sha256(text), response=response, is_mutating=write,
    )  # fmt: skip


APPROVED = {"ticketId": "T-1", "note": "Refund of 120 EUR approved"}
REJECTED = {"ticketId": "T-1", "note": "Refund rejected"}
LOOKUP = _step(0, "crm_find", {"q": "refund"}, '{"ticket":"T-1"}', False)
NOTE = _step(1, "crm_add_note", APPROVED, '{"noteId":"N-1"}', True)
WANT_NOTE = ExpectedAction("crm_add_note", canonical_json(APPROVED).decode())


def _expected_case(steps: list[Step], reward: float = 1.0) -> Case:
    return Case(
        case_id="c_expected_writes",
        steps=steps,
        expected=Expected(actions=[WANT_NOTE], source="tau_bench_task"),
        outcome=Outcome(reward=reward),
    )


def _agent(*notes: dict):
    """Looks the ticket up, then adds each note."""

    def agent(case, tools):
        tools.call("crm_find", {"q": "refund"})
        for note in notes:
            tools.call("crm_add_note", note)
        return agents._end(case)

    return agent


def test_a_key_argument_layer_2_forgives_is_still_a_high_param_diff() -> None:
    """``note`` made query-like (layer 2 compares it by similarity) is still a key argument of
    the expected write: the changed note is one high ``tool_param_diff``."""
    config = ReplayConfig.model_validate({"assertions": {"query_keys": ["note"]}})
    case = _expected_case([LOOKUP, NOTE])
    changed = {**APPROVED, "note": "Refund of 120 EUR approved!"}
    run = replay_case(_agent(changed), case, config)
    rows = Counter((d.diff_type, d.severity) for d in run.check.diffs)
    # the changed write got a synthetic receipt: its served output differs too (low)
    assert rows == Counter({("tool_param_diff", "high"): 1, ("tool_output_diff", "low"): 1})
    (param,) = [d for d in run.check.diffs if d.diff_type == "tool_param_diff"]
    assert param.detail == "crm_add_note: key arguments of an expected action differ"
    assert not run.check.final_state_ok
    # key arguments only: a key the expected action does not name may be added
    run = replay_case(_agent({**APPROVED, "pinned": True}), case, config)
    assert run.check.final_state_ok


def test_an_unexpected_write_is_a_high_extra_call() -> None:
    run = replay_case(_agent(APPROVED, REJECTED), _expected_case([LOOKUP, NOTE]))
    assert Counter((d.diff_type, d.severity) for d in run.check.diffs)[("extra_call", "high")] == 1
    (row,) = [d for d in run.check.diffs if d.diff_type == "extra_call"]
    assert row.detail.endswith("; not an expected action")
    assert not run.check.final_state_ok


def test_an_expectation_the_recording_missed_is_no_regression() -> None:
    failed = _expected_case([LOOKUP, _step(1, "crm_add_note", REJECTED, '{"noteId":"N-1"}', True)],
                            reward=0.0)  # fmt: skip
    run = replay_case(reissue, failed)
    assert run.check.diffs == [] and run.check.final_state_ok
    # making the expected write instead changes the recorded path (a high write diff) and the
    # row says it now meets the task
    fixed = replay_case(_agent(APPROVED), failed)
    details = [d.detail for d in fixed.check.diffs if d.diff_type == "tool_param_diff"]
    assert details == ["crm_add_note: note differ; meets an expected action the recording missed"]
    assert fixed.check.final_state_ok  # nothing the recording achieved was lost
