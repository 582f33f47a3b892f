"""`golden preview --case ID` explains a case with the words and statuses of the decisions
table a run publishes (selected in preview = published by the run, when nothing is refused)."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow


def test_preview_case_says_what_the_run_decides(corpus, tmp_path, monkeypatch) -> None:
    source, truth = corpus
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]},
                    "quotas": {"max_cases": 50}},
        "run": {"work_dir": str(tmp_path / "work")},
    }))  # fmt: skip
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", "preview-case-test-key-0123456789abcdef0123")
    store = tmp_path / "store"
    run = CliRunner().invoke(
        app,
        ["run", "--local", "--config", str(config), "--source", str(source), "--format",
         "native", "--store", str(store), "--set", "pc"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    version = re.search(r"published version: (\S+)", run.output).group(1)
    decisions = pl.read_parquet(store / "pc" / "versions" / version / "decisions.parquet")
    picks = {}
    for prefix in ("published", "no_funnel", "dedup:near", "quota:", "gate:"):
        rows = decisions.filter(pl.col("status").str.starts_with(prefix))
        assert rows.height, prefix
        picks[prefix] = rows.row(0, named=True)
    args = ["preview", "--config", str(config), "--format", "native", "--json"]
    for row in picks.values():
        args += ["--case", row["case_id"]]
    preview = CliRunner().invoke(app, [*args, str(source)])
    assert preview.exit_code == 0, preview.output
    explained = {c["case_id"]: c for c in json.loads(preview.output)["cases"]}
    for prefix, row in picks.items():
        case = explained[row["case_id"]]
        expected = "selected" if row["status"] == "published" else row["status"]
        assert case["status"] == expected, (prefix, case, row)
        assert case["cluster_id"] == row["cluster_id"]
        assert case["replaced_by"] == row["replaced_by"]
    near = explained[picks["dedup:near"]["case_id"]]
    assert near["why"].startswith("dedup:near: a near duplicate")
    assert (
        picks["published"]["case_id"] in explained
        and explained[picks["published"]["case_id"]]["reasons"]
    )  # its funnel reasons
    text = CliRunner().invoke(
        app,
        ["preview", "--config", str(config), "--format", "native", "--case",
         picks["no_funnel"]["case_id"], str(source)],
    )  # fmt: skip
    assert f"case {picks['no_funnel']['case_id']}: no_funnel: in no select funnel" in text.output
