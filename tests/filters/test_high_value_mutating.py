"""high_value_mutating: writes AND (systems | amount | complexity), with readable reasons."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import score_cases


def _members(frame: pl.DataFrame, cfg: FunnelsConfig | None = None) -> dict[str, str | None]:
    scored = score_cases(frame, cfg or FunnelsConfig(), details=True)
    return {
        row["case_id"]: row["why_high_value_mutating"]
        for row in scored.iter_rows(named=True)
        if row["in_high_value_mutating"]
    }


def test_each_criterion_and_its_boundary(build):
    s = build.step
    cases = [
        build.case("two_systems", [s(0, "erp_create_order", write=True),
                                   s(1, "mes_schedule_job", write=True)]),
        build.case("one_system", [s(0, "erp_create_order", write=True),
                                  s(1, "erp_update_order", write=True)]),
        build.case("amount_edge", [s(0, "erp_create_order", write=True, args={"amount": 10000})]),
        build.case("amount_below", [s(0, "erp_create_order", write=True,
                                      args={"amount": 9999.99})]),
        build.case("steps_20", [s(0, "erp_create_order", write=True), *build.reads(1, 19)]),
        build.case("steps_19", [s(0, "erp_create_order", write=True), *build.reads(1, 18)]),
        build.case("long_read_only", build.reads(0, 30)),
        build.case("failed_write", [s(0, "erp_create_order", "error", write=True,
                                      args={"amount": 50000}),
                                    s(1, "mes_schedule_job", "timeout", write=True)]),
        build.case("amount_in_read", [s(0, "erp_get_order", args={"amount": 50000}),
                                      s(1, "erp_create_order", write=True, args={"amount": 5})]),
    ]  # fmt: skip
    got = _members(build.frame(cases))
    assert set(got) == {"two_systems", "amount_edge", "steps_20"}
    assert got["two_systems"] == "2 write calls across ERP+MES; 2 systems >= 2"
    assert got["amount_edge"] == "1 write call across ERP; amount 10,000.00 >= 10,000"
    assert got["steps_20"] == "1 write call across ERP; 20 steps >= 20"


def test_amount_paths_at_depth_in_lists_and_as_strings(build):
    s = build.step
    cases = [
        build.case("nested", [s(0, "fin_pay", write=True, args={"payment": {"amount": 48200}})]),
        build.case("listed", [s(0, "erp_order", write=True,
                                args={"items": [{"amount": 3}, {"amount": "12000.5"}]})]),
        build.case("total", [s(0, "erp_order", write=True, args={"totalAmount": 20000})]),
        build.case("other_key", [s(0, "erp_order", write=True, args={"price": 99999})]),
        build.case("odd_shape", [s(0, "erp_order", write=True, args={"items": "many"})]),
    ]  # fmt: skip
    got = _members(build.frame(cases))
    assert set(got) == {"nested", "listed", "total"}
    assert "amount 48,200.00 >= 10,000" in (got["nested"] or "")
    assert "amount 12,000.50" in (got["listed"] or "")


def test_response_amounts_only_when_configured(build):
    case = build.case("resp", [build.step(0, "erp_order", write=True, response={"total": 15000})])
    assert _members(build.frame([case])) == {}
    cfg = FunnelsConfig()
    cfg.high_value_mutating.amount_in = ["arguments", "response"]
    assert set(_members(build.frame([case]), cfg)) == {"resp"}


def test_system_from_step_then_tool_map_then_prefix(build):
    s = build.step
    cases = [
        build.case(
            "recorded", [s(0, "erp_a", write=True, system="WMS"), s(1, "erp_b", write=True)]
        ),
        build.case("mapped", [s(0, "book_reservation", write=True), s(1, "erp_b", write=True)]),
    ]
    cfg = FunnelsConfig()
    assert set(_members(build.frame(cases), cfg)) == {"recorded"}
    cfg.high_value_mutating.tool_systems = {"book_reservation": "AIRLINE"}
    got = _members(build.frame(cases), cfg)
    assert got["mapped"] == "2 write calls across AIRLINE+ERP; 2 systems >= 2"


def test_complexity_options_percentile_tools_retries(build):
    s = build.step
    short = [build.case(f"short{i}", [s(0, "erp_w", write=True), *build.reads(1, 2)])
             for i in range(9)]  # fmt: skip
    longer = build.case("longer", [s(0, "erp_w", write=True), *build.reads(1, 8)])
    cfg = FunnelsConfig()
    cfg.high_value_mutating.min_steps = None
    cfg.high_value_mutating.steps_percentile = 90
    got = _members(build.frame([*short, longer]), cfg)
    assert set(got) == {"longer"}
    assert "9 steps > p90 of batch" in (got["longer"] or "")

    cfg = FunnelsConfig()
    cfg.high_value_mutating.min_steps = None
    cfg.high_value_mutating.min_retries = 2
    retried = build.case("retried", [s(0, "erp_w", write=True), s(1, "kb_a", "error"),
                                     s(2, "kb_a", "timeout"), s(3, "kb_a")])  # fmt: skip
    once = build.case("once", [s(0, "erp_w", write=True), s(1, "kb_a", "error"), s(2, "kb_a")])
    got = _members(build.frame([retried, once]), cfg)
    assert got == {"retried": "1 write call across ERP; 2 retries >= 2"}


def test_min_write_calls_and_disabled_criteria(build):
    s = build.step
    case = build.case("c", [s(0, "erp_w", write=True), s(1, "mes_w", write=True)])
    cfg = FunnelsConfig()
    cfg.high_value_mutating.min_write_calls = 3
    assert _members(build.frame([case]), cfg) == {}
    cfg = FunnelsConfig()
    cfg.high_value_mutating.min_systems = None
    assert _members(build.frame([case]), cfg) == {}
