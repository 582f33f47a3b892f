"""One tenant opt-out rule: the gate (whole frame) and the redactor (per row) agree."""

from __future__ import annotations

import polars as pl

from golden_distill.datasets.tenant_opt_out import TenantOptOut
from golden_distill.filters import redacted
from golden_distill.redaction import redactor


def test_frame_and_row_forms_of_the_rule_agree():
    rule = TenantOptOut.of(["t-out", "t-gone"])
    tenants = ["t-out", "t-acme", None, "t-gone", "T-OUT"]
    by_frame = pl.DataFrame({"tenant_id": tenants}).select(rule.expr()).to_series().to_list()
    assert by_frame == [True, False, False, True, False]
    assert by_frame == [rule.excludes(t) for t in tenants]


def test_gate_and_redactor_report_the_same_reason():
    assert redacted.OPTED_OUT == redactor.OPTED_OUT == "tenant_opted_out"
