"""redacted gate: runs last, refuses opted-out tenants, adds nothing to value_score."""

from __future__ import annotations

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import score_cases


def test_opted_out_tenant_is_refused_with_a_reason_code(build):
    s = build.step
    cases = [
        build.case("kept", [s(0, "handoff_to_human")], tenant="t-ok"),
        build.case("refused", [s(0, "handoff_to_human")], tenant="t-out"),
        build.case("plain", [s(0, "kb")], tenant="t-out"),
    ]
    cfg = FunnelsConfig()
    cfg.redacted.opt_out_tenants = ["t-out"]
    rows = {r["case_id"]: r for r in score_cases(build.frame(cases), cfg).iter_rows(named=True)}
    assert rows["kept"]["candidate"] and rows["kept"]["funnels"] == ["human_handoff", "redacted"]
    assert not rows["refused"]["candidate"]
    assert rows["refused"]["status"] == "gate:tenant_opted_out"
    assert rows["refused"]["funnels"] == ["human_handoff"]
    assert rows["plain"]["status"] == "no_funnel"
    assert rows["kept"]["value_score"] == 1.0  # the gate adds nothing


def test_no_opt_outs_by_default(build):
    case = build.case("c", [build.step(0, "handoff_to_human")], tenant="anyone")
    row = score_cases(build.frame([case]), FunnelsConfig(), details=True).row(0, named=True)
    assert row["in_redacted"] and row["candidate"]
