"""recovery: failure, then success of the same tool (or an alternative) within M steps, good end."""

from __future__ import annotations

from golden_distill.datasets.case import Outcome
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import score_cases

GOOD = Outcome(status="success", reward=1.0)


def _members(frame, cfg=None):
    scored = score_cases(frame, cfg or FunnelsConfig(), details=True)
    return {
        r["case_id"]: r["why_recovery"] for r in scored.iter_rows(named=True) if r["in_recovery"]
    }


def _run(build, case_id, tail, outcome=GOOD, failed="erp_get_order", status="error"):
    s = build.step
    return build.case(case_id, [s(0, "kb_search"), s(1, failed, status), *tail], outcome=outcome)


def test_window_alternatives_and_negatives(build):
    s = build.step
    cases = [
        _run(build, "retry_next", [s(2, "erp_get_order")]),
        _run(build, "retry_at_3", [s(2, "kb_a"), s(3, "kb_b"), s(4, "erp_get_order")]),
        _run(build, "retry_at_4", [s(2, "a"), s(3, "b"), s(4, "c"), s(5, "erp_get_order")]),
        _run(build, "alternative", [s(2, "kb_a"), s(3, "erp_search_orders")]),
        _run(build, "unrelated", [s(2, "crm_get_customer")]),
        _run(build, "never_retried", [s(2, "kb_a")]),
        _run(build, "retry_failed", [s(2, "erp_get_order", "timeout")]),
        _run(build, "timeout_retry", [s(2, "erp_get_order")], status="timeout"),
    ]  # fmt: skip
    got = _members(build.frame(cases))
    assert set(got) == {"retry_next", "retry_at_3", "alternative", "timeout_retry"}
    assert got["retry_next"] == (
        "erp_get_order error at step 1 recovered by retry 1 step later; "
        "1 of 1 failed calls recovered; good end (reward 1.0)"
    )
    assert got["alternative"].startswith(
        "erp_get_order error at step 1 recovered by alternative erp_search_orders 2 steps later"
    )


def test_window_counts_positions_not_seq_values(build):
    s = build.step
    steps = [s(10, "erp_get_order", "error"), s(50, "kb"), s(90, "erp_get_order")]
    gappy = build.case("gappy", steps, outcome=GOOD)
    assert set(_members(build.frame([gappy]))) == {"gappy"}


def test_bad_ends_exclude(build):
    s = build.step
    tail = [s(2, "erp_get_order")]
    cases = [
        _run(build, "failed", tail, Outcome(status="failed")),
        _run(build, "abandoned", tail, Outcome(status="Abandoned")),
        _run(build, "reward_zero", tail, Outcome(reward=0.0)),
        _run(build, "state_failed", tail, Outcome(final_state="REFUND_FAILED")),
        _run(build, "no_reward", tail, Outcome(status="success")),
    ]
    assert set(_members(build.frame(cases))) == {"no_reward"}


def test_configurable_window_statuses_and_alternatives(build):
    s = build.step
    late = _run(build, "late", [s(2, "a"), s(3, "b"), s(4, "c"), s(5, "erp_get_order")])
    routed = _run(build, "routed", [s(2, "crm_lookup")], failed="crm_find")
    cfg = FunnelsConfig()
    cfg.recovery.recover_within_steps = 4
    cfg.recovery.alternatives = {"crm_find": ["crm_lookup"]}
    assert set(_members(build.frame([late, routed]), cfg)) == {"late", "routed"}
    cfg.recovery.failure_statuses = ["timeout"]
    assert _members(build.frame([late, routed]), cfg) == {}


def test_counts_several_failures_and_scores_them(build):
    s = build.step
    case = build.case("two", [s(0, "a", "error"), s(1, "a"), s(2, "b", "timeout"), s(3, "b"),
                              s(4, "c", "error")], outcome=GOOD)  # fmt: skip
    scored = score_cases(build.frame([case]), FunnelsConfig(), details=True)
    row = scored.row(0, named=True)
    assert "2 of 3 failed calls recovered" in row["why_recovery"]
    assert row["score_recovery"] == 2.0
