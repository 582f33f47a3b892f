"""Reproducibility as a ratio: ``--repeat N`` replays each case N times; each case and each
difference says in how many of them it appeared ("2/3"), flaky cases are flagged (a P2 line),
and the gate can count only differences that reproduce often enough."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import replay_agents as agents
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import ReplayConfig, replay_cases
from golden_distill.datasets.replay.agents import reissue


@pytest.fixture(scope="module")
def cases(generated_set):
    golden = open_set(*generated_set)
    return [c.case for c in golden.cases()][:12]


def test_a_deterministic_agent_reproduces_every_time(cases) -> None:
    run = replay_cases(cases, reissue, baseline_version="x", repeat=4)
    assert {(r.check.reproduced, r.check.repeats) for r in run.runs} == {(4, 4)}
    assert not any(r.check.flaky for r in run.runs)
    assert run.figures["flaky_cases"] == 0 and run.gate.verdict == "pass"
    steady = replay_cases(cases, agents.drop_write, baseline_version="x", repeat=3)
    rows = [d for r in steady.runs for d in r.check.diffs]
    assert rows and {(d.seen, d.repeats) for d in rows} == {(3, 3)}  # the same rows each time


def test_a_flaky_agent_is_flagged_with_ratios(cases) -> None:
    agents._FLAKY_CALLS[0] = 0
    run = replay_cases(cases, agents.flaky, baseline_version="x", repeat=3)
    # every third call skips its last tool call: one of three replays of each case differs
    assert {(r.check.reproduced, r.check.repeats) for r in run.runs} == {(2, 3)}
    assert all(r.check.flaky for r in run.runs)
    assert {d.seen for r in run.runs for d in r.check.diffs} == {1}
    assert run.figures["flaky_cases"] == len(cases)
    (line,) = [x for x in run.gate.lines if x.name == "flaky_cases"]
    assert line.crossed and not line.fails and line.level == "P2"
    # the gate counts a difference only when it reproduces in at least half of the repeats
    agents._FLAKY_CALLS[0] = 0
    half = ReplayConfig.model_validate({"gate": {"repeat": {"min_diff_ratio": 0.5}}})
    lenient = replay_cases(cases, agents.flaky, half, baseline_version="x", repeat=3)
    assert [d for r in lenient.runs for d in r.check.diffs] == []
    # kept for the report, still flagged flaky, not counted
    assert all(r.check.below_ratio and r.check.flaky for r in lenient.runs)
    assert lenient.figures["write_diffs"] == 0
    assert {x.name for x in lenient.gate.lines if x.crossed} == {"flaky_cases"}
    assert lenient.gate.verdict == "warn" and lenient.exit_code == 0


def test_the_command_line_reports_the_ratios(generated_set, tmp_path) -> None:
    from golden_distill.flows.cli import app

    store, ref = generated_set
    agents._FLAKY_CALLS[0] = 0
    result = CliRunner().invoke(app, ["replay", ref, "--store", store, "--agent",
                                      "replay_agents:flaky", "--out", str(tmp_path / "o"),
                                      "--repeat", "3"])  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    assert "P2 flaky_cases" in result.output
    assert "3 replays per case: 0 case(s) as recorded in 3/3, 295 flaky" in result.output
    summary = json.loads((tmp_path / "o" / "run_summary.json").read_text())
    assert summary["repeats"] == 3 and summary["flaky_cases"]
    rows = pq.read_table(tmp_path / "o" / "regression_diff_result.parquet").to_pylist()
    details = [json.loads(r["diff_detail"]) for r in rows]
    assert {(d["seen"], d["repeats"]) for d in details} == {(1, 3)}
    html = (tmp_path / "o" / "report.html").read_text()
    assert "as recorded in 2/3 replays <b class='warn'>flaky</b>" in html
    assert "<td>1/3</td>" in html
