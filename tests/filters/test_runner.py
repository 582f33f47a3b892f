"""The funnel stage as the flow calls it: table columns, reasons as JSON, batch independence."""

from __future__ import annotations

import json

import polars as pl
from two_phase import annotate, select

from golden_distill.datasets.case import Outcome
from golden_distill.datasets.schema import CASE_SCHEMA, GOLDEN_SCHEMA
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import batch_figures, score_cases


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


def test_shards_scored_with_batch_wide_figures_match_the_whole(build):
    s = build.step
    cases = [
        build.case(f"c{i}", [s(0, "erp_w", write=True), *build.reads(1, i)]) for i in range(10)
    ]
    frame = build.frame(cases)
    cfg = FunnelsConfig()
    cfg.high_value_mutating.min_steps = None
    cfg.high_value_mutating.steps_percentile = 80
    whole = score_cases(frame, cfg).sort("case_id")
    figures = batch_figures(frame.lazy(), cfg)
    parts = pl.concat(
        [score_cases(frame.slice(i, 3), cfg, figures=figures) for i in range(0, 10, 3)]
    ).sort("case_id")
    assert whole.equals(parts)
    assert whole["in_high_value_mutating"].sum() == 2  # 10 and 9 steps > p80 (8.2)
    alone = score_cases(frame.slice(0, 3), cfg)  # a shard's own percentile differs
    assert alone["in_high_value_mutating"].sum() == 1


def test_gates_run_last_and_every_funnel_has_a_config_section():
    from golden_distill.filters.config import FUNNEL_SECTIONS
    from golden_distill.filters.registry import build_funnels, funnel_names

    funnels = build_funnels(FunnelsConfig())
    roles = [f.role for f in funnels]
    assert roles == sorted(roles, key=lambda r: r == "gate") and roles[-1] == "gate"
    assert tuple(funnel_names()) == FUNNEL_SECTIONS
    cfg = FunnelsConfig()
    cfg.recovery.enabled = False
    assert "recovery" not in [f.name for f in build_funnels(cfg)]


def test_a_run_read_twice_is_scored_twice_and_published_once(build):
    frame = _mixed(build)
    doubled = pl.concat([frame, frame])
    scored = score_cases(doubled, FunnelsConfig())
    assert scored.height == 2 * frame.height
    result = select(doubled, FunnelsConfig())
    assert result.stats["selected"] == 3  # the second reading is a duplicate, not a new case
    assert result.stats["dropped"]["dedup:duplicate_id"] == 3
    assert sorted(result.table["case_id"]) == sorted(
        select(frame, FunnelsConfig()).table["case_id"]
    )


def test_parquet_is_read_field_by_field_and_scores_the_same(build, tmp_path):
    import pyarrow.parquet as pq

    from golden_distill.filters.case_source import iter_case_batches

    frame = _mixed(build)
    path = tmp_path / "part-0.parquet"
    pq.write_table(frame.to_arrow(), path)  # pyarrow writer, like the canonical shards
    cfg = FunnelsConfig()
    (batch,) = list(iter_case_batches(path, cfg, 100))
    step_fields = {f.name for f in batch.schema["steps"].inner.fields}
    assert step_fields == {"seq", "kind", "name", "status", "is_mutating", "system", "arguments"}
    assert "context" not in batch.columns and "user_input" not in batch.columns
    from_file = score_cases(path, cfg).sort("case_id")
    assert from_file.equals(score_cases(frame, cfg).sort("case_id"))
