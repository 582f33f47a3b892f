"""Batch-wide figures are computed once over every shard, not per shard (issue 16, point 4).

``steps_percentile`` compares each run with a percentile of the *whole batch*. The three
tau-bench files are three shards whose run lengths differ (airline runs are longer), so a
percentile taken per shard selects other runs than one taken over the batch: 90 against 74
with the settings below. The flow must select what one pass over all 400 runs selects.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml
from golden_test_data import all_runs_paths

from golden_distill.flows.config import load_pipeline_config

pytestmark = pytest.mark.slow

PROFILE = Path(__file__).resolve().parents[2] / "configs" / "tau-bench.yaml"
ONLY_PERCENTILE = {
    "min_systems": None,
    "amount_threshold": None,
    "min_steps": None,
    "steps_percentile": 75,
    "good_reward_above": None,
}


def test_steps_percentile_is_taken_over_the_whole_batch(prefect_api, pseudonym_key, tmp_path):
    from golden_distill.datasets.ingest import ingest
    from golden_distill.datasets.reader import open_set
    from golden_distill.filters.runner import score_cases
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    raw = yaml.safe_load(PROFILE.read_text())
    raw["ingest"]["tool_catalogues"] = [str(PROFILE.parent / "tools" / "tau-bench.yaml")]
    raw["funnels"]["high_value_mutating"].update(ONLY_PERCENTILE)
    raw["funnels"]["quotas"] = {"enabled": False}
    raw["run"] = {"work_dir": str(tmp_path / "work")}
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    config = load_pipeline_config(config_path)

    # the expectation: one scoring pass over all runs at once
    ingest([str(p) for p in all_runs_paths()], tmp_path / "all", fmt="chat", config=config.ingest)
    cases = pl.read_parquet(tmp_path / "all" / "cases")
    whole = score_cases(cases, config.funnels)
    expected = set(whole.filter(pl.col("in_high_value_mutating"))["case_id"].to_list())
    uri = pl.col("source").struct.field("uri")
    per_shard = sum(
        score_cases(cases.filter(uri == u), config.funnels)["in_high_value_mutating"].sum()
        for u in cases.select(uri).unique().to_series()
    )
    assert per_shard != len(expected)  # the shards differ: the test can tell the two apart

    store = tmp_path / "store"
    version = run_distill(
        DistillParams(
            config_path=str(config_path),
            sources=[str(p) for p in all_runs_paths()],
            source_format="chat",
            store_url=str(store),
            set_name="pct",
        )
    )
    golden = open_set(str(store), f"pct@{version}")
    assert golden.manifest["stats"]["funnels"]["high_value_mutating"] == len(expected)
    table = pl.from_arrow(golden.read_table())
    reasons = [json.loads(r).get("high_value_mutating") for r in table["funnel_reasons"]]
    published_hv = {c for c, r in zip(table["case_id"], reasons, strict=True) if r}
    assert published_hv and published_hv <= expected
    assert all("> p75 of batch" in r for r in reasons if r)
    assert len({r.split("(")[-1] for r in reasons if r}) == 1  # one threshold for every case
