"""The funnel stage as the flow calls it: table columns, reasons as JSON, batch independence."""

from __future__ import annotations

import json

import polars as pl

from golden_distill.datasets.case import Outcome
from golden_distill.datasets.schema import CASE_SCHEMA, GOLDEN_SCHEMA
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import annotate, score_cases, select


def _mixed(build):
    s = build.step
    return build.frame(
        [
            build.case("hv", [s(0, "erp_w", write=True, args={"total": 12000}),
                              s(1, "mes_w", write=True)]),
            build.case("both", [s(0, "erp_get_order", "timeout"), s(1, "erp_get_order"),
                                s(2, "transfer_to_human_agents")],
                       outcome=Outcome(status="handed_off")),
            build.case("quote\"tool", [s(0, 'we"ird\\tool', "error"), s(1, 'we"ird\\tool')]),
            build.case("none", [s(0, "kb")]),
            build.case("empty", []),
        ]
    )  # fmt: skip


def test_table_has_pipeline_columns_and_valid_reason_json(build):
    result = select(_mixed(build), FunnelsConfig())
    table = result.table
    assert set(table["case_id"]) == {"hv", "both", 'quote"tool'}
    assert table.columns == [*CASE_SCHEMA.names, "funnels", "funnel_reasons", "value_score"]
    for name in ("funnels", "funnel_reasons", "value_score"):
        assert str(GOLDEN_SCHEMA.field(name).type) in {"list<item: string>", "string", "double"}
    rows = {r["case_id"]: r for r in table.iter_rows(named=True)}
    reasons = json.loads(rows["both"]["funnel_reasons"])
    assert set(reasons) == {"recovery", "human_handoff", "redacted"} == set(rows["both"]["funnels"])
    assert reasons["recovery"].startswith("erp_get_order timeout at step 0 recovered by retry")
    assert json.loads(rows['quote"tool']["funnel_reasons"])["recovery"].startswith('we"ird\\tool')
    assert rows["hv"]["value_score"] == 2.0  # systems + amount
    assert rows["both"]["value_score"] == 2.0  # one recovery + one hand-off trigger
    assert result.stats["overlaps"]["recovery&human_handoff"] == 1
    assert result.stats["dropped"] == {"no_funnel": 2}


def test_batching_does_not_change_decisions(build):
    frame = _mixed(build)
    one = score_cases(frame, FunnelsConfig(), batch_rows=1000).sort("case_id")
    many = score_cases(frame, FunnelsConfig(), batch_rows=2).sort("case_id")
    assert one.equals(many)


def test_annotate_one_shard(build):
    frame = _mixed(build)
    result = select(frame, FunnelsConfig(), with_table=False)
    shard = annotate(frame.slice(0, 2), result.decisions)
    assert sorted(shard["case_id"].to_list()) == ["both", "hv"]
    assert shard["funnel_reasons"].str.contains("redacted").all()
    assert shard["value_score"].dtype == pl.Float64


def test_empty_input(build):
    result = select(build.frame([]), FunnelsConfig())
    assert result.table.height == 0 and result.stats["cases"] == 0
