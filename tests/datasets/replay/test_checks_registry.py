"""Replay assertions are registered checks: adding one is one class and one line in
``CHECKS``; its rows reach the case's diffs, the gate and the report like any other."""

from __future__ import annotations

from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.replay import AgentResult, ReplayConfig, replay_case
from golden_distill.datasets.replay import checks as registry
from golden_distill.datasets.replay.assertions import CaseAsserter
from golden_distill.datasets.replay.checks.base import Check, CheckContext
from golden_distill.datasets.replay.diffs import Diff


class PolitenessCheck(Check):
    """An example check: the answer must say please."""

    name = "politeness"
    on_fast_path = True

    def run(self, ctx: CheckContext) -> list[Diff]:
        answer = ctx.result.answer if ctx.result else None
        if answer is None or "please" in answer:
            return []
        return [ctx.diff("answer_diff", "the answer does not say please", replayed=answer)]


def test_every_check_has_a_unique_name_and_runs_in_registry_order() -> None:
    names = [cls.name for cls in registry.CHECKS]
    assert len(set(names)) == len(names) and all(names)
    asserter = CaseAsserter(ReplayConfig())
    assert [c.name for c in asserter.checks] == names


def test_a_new_check_is_one_class_and_one_registry_line(monkeypatch) -> None:
    monkeypatch.setattr(registry, "CHECKS", (*registry.CHECKS, PolitenessCheck))
    case = Case(case_id="c_polite", steps=[Step(seq=0, kind="tool", name="t", occurrence=1)])
    run = replay_case(lambda c, tools: AgentResult(answer="go away"), case)
    (row,) = [d for d in run.check.diffs if d.detail == "the answer does not say please"]
    assert row.severity == "low" and row.replayed == "go away"
    run = replay_case(lambda c, tools: AgentResult(answer="please wait"), case)
    assert not [d for d in run.check.diffs if d.diff_type == "answer_diff"]
