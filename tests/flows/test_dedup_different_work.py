"""End to end: two tau-bench runs with one transcript but different task and outcome (task 100
reward 1, task 200 reward 0) are two clusters and both are published; the pair is listed as a
mixed pair in the manifest and the report, never merged."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import yaml
from golden_test_data import airline_runs_path
from typer.testing import CliRunner

from golden_distill.flows.cli import app

CATALOGUE = Path(__file__).resolve().parents[2] / "configs" / "tools" / "tau-bench.yaml"


def _handoff_run() -> dict:
    """A real airline run that hands off to a human (a candidate whatever its reward)."""
    for run in json.loads(airline_runs_path().read_text()):
        calls = [
            c["function"]["name"]
            for m in run["traj"]
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        ]
        if "transfer_to_human_agents" in calls:
            return run
    raise AssertionError("the vendored airline runs hold hand-offs")


def test_same_transcript_different_task_and_outcome_both_published(tmp_path, pseudonym_key):
    from golden_distill.datasets.reader import open_set

    run = _handoff_run()
    pair = [
        dict(run, task_id=100, trial=0, reward=1.0),
        dict(run, task_id=200, trial=0, reward=0.0),
    ]
    source = tmp_path / "runs.json"
    source.write_text(json.dumps(pair))
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "ingest": {"tool_catalogues": [str(CATALOGUE)]},
                "run": {"work_dir": str(tmp_path / "work")},
            }
        )
    )
    store = tmp_path / "store"
    result = CliRunner().invoke(
        app,
        ["run", "--local", "--config", str(config), "--source", str(source), "--format", "chat",
         "--store", str(store), "--set", "pair"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "published: 2 cases" in result.output
    version = (store / "pair" / "refs" / "latest").read_text().strip()
    golden = open_set(str(store), f"pair@{version}")
    table = golden.read_table()
    assert table.num_rows == 2
    assert sorted(table["outcome"].combine_chunks().field("reward").to_pylist()) == [0.0, 1.0]
    clusters = pq.read_table(store / "pair" / "versions" / version / "clusters.parquet")
    assert len(set(clusters["cluster_id"].to_pylist())) == 2
    stats = golden.manifest["stats"]
    assert stats["mixed_pairs_total"] == 1
    assert stats["mixed_pairs"][0]["differs"] == "task, outcome"
    assert stats["removed_by_dedup"] == 0
    report = (store / "pair" / "versions" / version / "report.html").read_text()
    assert "Dedup: mixed pairs (review)" in report and "task, outcome" in report
