"""human_handoff: hand-off tool or step, outcome flag, low intent confidence, low-confidence."""

from __future__ import annotations

from golden_distill.datasets.case import Outcome
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import score_cases


def _members(frame, cfg=None):
    scored = score_cases(frame, cfg or FunnelsConfig(), details=True)
    return {
        r["case_id"]: r["why_human_handoff"]
        for r in scored.iter_rows(named=True)
        if r["in_human_handoff"]
    }


def test_triggers_and_boundaries(build):
    s, c = build.step, build.case
    cases = [
        c("tool", [s(0, "kb"), s(1, "transfer_to_human_agents", "error")], confidence=0.9),
        c("kind", [s(0, "route_to_queue", kind="handoff")]),
        c("flag", [s(0, "kb")], outcome=Outcome(handoff=True, handoff_reason="Jane Doe is upset")),
        c("conf_low", [s(0, "kb")], confidence=0.49),
        c("conf_edge", [s(0, "kb")], confidence=0.5),
        c("no_conf", [s(0, "kb")], confidence=None),
        c("unsure", [s(0, "kb")], outcome=Outcome(low_confidence=True)),
        c("ticket", [s(0, "crm_create_escalation_ticket", write=True)]),
        c("declined", [s(0, "kb")], outcome=Outcome(handoff=False, handoff_reason="declined")),
    ]
    got = _members(build.frame(cases))
    assert set(got) == {"tool", "kind", "flag", "conf_low", "unsure"}
    assert got["tool"] == "hand-off step transfer_to_human_agents at step 1"
    assert got["kind"] == "hand-off step route_to_queue at step 0"
    assert got["flag"] == "outcome.handoff set"  # the recorded reason text is never quoted
    assert got["conf_low"] == "intent confidence 0.49 < 0.5"
    assert got["unsure"] == "low-confidence flag set"


def test_triggers_can_be_switched_off(build):
    s, c = build.step, build.case
    cases = [
        c("kind", [s(0, "route_to_queue", kind="handoff")]),
        c("flag", [s(0, "kb")], outcome=Outcome(handoff=True)),
        c("conf_low", [s(0, "kb")], confidence=0.2),
        c("unsure", [s(0, "kb")], outcome=Outcome(low_confidence=True)),
        c("custom", [s(0, "page_supervisor")]),
    ]
    cfg = FunnelsConfig()
    cfg.human_handoff.handoff_step_kind = False
    cfg.human_handoff.outcome_handoff = False
    cfg.human_handoff.min_intent_confidence = None
    cfg.human_handoff.low_confidence_flag = False
    cfg.human_handoff.handoff_tools = ["page_supervisor"]
    assert set(_members(build.frame(cases), cfg)) == {"custom"}


def test_contribution_counts_triggers(build):
    case = build.case("both", [build.step(0, "handoff_to_human")], confidence=0.1,
                      outcome=Outcome(handoff=True))  # fmt: skip
    row = score_cases(build.frame([case]), FunnelsConfig(), details=True).row(0, named=True)
    assert row["score_human_handoff"] == 3.0
    assert row["value_score"] == 3.0
