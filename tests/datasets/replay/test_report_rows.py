"""Rows and a report a person can act on: totals by type and tool, each case's input, intent
and funnels, ``n/a`` for an unknown figure, no "every case replayed as recorded" under a WARN,
the versions compared, and what changed since the previous replay of the same set."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import replay_cases
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.replay.report import render_report

runner = CliRunner()


def _replay(store: str, ref: str, agent: str, out, *extra: str):
    from golden_distill.flows.cli import app

    return runner.invoke(
        app, ["replay", ref, "--store", store, "--agent", agent, "--out", str(out), *extra]
    )


def test_unknown_token_growth_is_n_a_and_a_warn_never_says_all_replayed_as_recorded(
    generated_set,
) -> None:
    import replay_agents as agents

    golden = open_set(*generated_set)
    cases = [c.case for c in golden.cases()][:30]
    clean = replay_cases(cases, reissue, baseline_version="x")  # reports no tokens
    assert clean.figures["token_growth"] is None
    (line,) = [x for x in clean.gate.lines if x.name == "token_growth"]
    assert not line.crossed and line.describe().endswith("n/a (limit 0.2) n/a")
    html = render_report(clean)
    assert "<td>token_growth</td><td>n/a</td><td>0.2</td><td class='n/a'>n/a</td>" in html
    assert "every case replayed as recorded" in html
    warned = replay_cases(cases, agents.token_hungry, baseline_version="x")
    assert warned.gate.verdict == "warn"
    assert [d for r in warned.runs for d in r.check.diffs] == []
    html = render_report(warned)
    assert "every case replayed as recorded" not in html
    assert "the gate's run-wide lines above say what it warns or fails on" in html


def test_the_report_totals_diffs_and_shows_each_case(small_set, tmp_path) -> None:
    store, ref, _, _ = small_set
    result = _replay(store, ref, "replay_agents:change_amount", tmp_path / "o")
    assert result.exit_code == 1
    html = (tmp_path / "o" / "report.html").read_text()
    rows = pq.read_table(tmp_path / "o" / "regression_diff_result.parquet").to_pylist()
    assert "<h2>Differences by type</h2>" in html and "<h2>Differences by tool</h2>" in html
    tools = {json.loads(r["diff_detail"])["tool"] for r in rows} - {None}
    assert tools and all(f"<tr><td>{t}</td><td>tool_param_diff</td>" in html for t in tools)
    golden = open_set(store, ref)
    case = golden.get(rows[0]["case_id"]).case
    assert f"intent: <b>{case.intent.name}</b>" in html
    assert f"funnels: {', '.join(case.funnels)}" in html and "input: <q>" in html
    # versions: recorded agent version(s) against the agent's own (its module's __version__)
    summary = json.loads((tmp_path / "o" / "run_summary.json").read_text())
    assert summary["new_version"] == "9.9.0-test"
    recorded = {golden.get(r["case_id"]).case.agent.agent_version for r in rows}
    assert {r["old_version"] for r in rows} == recorded and None not in recorded
    assert summary["recorded_versions"] and ref not in summary["recorded_versions"]
    assert "against the recorded <b>" in html and "9.9.0-test" in html


def test_the_report_compares_with_the_previous_replay_of_the_set(small_set, tmp_path) -> None:
    store, ref, _, _ = small_set
    out = tmp_path / "o"
    assert _replay(store, ref, "golden_distill.datasets.replay.agents:reissue", out).exit_code == 0
    result = _replay(store, ref, "replay_agents:change_amount", out)
    changed = {r["case_id"] for r in
               pq.read_table(out / "regression_diff_result.parquet").to_pylist()}  # fmt: skip
    assert changed
    assert "since run_" in result.output
    assert f": {len(changed)} case(s) newly with differences, 0 fixed" in result.output
    html = (out / "report.html").read_text()
    assert "<h2>Since the previous replay</h2>" in html
    assert f"<li>{len(changed)} case(s) with differences that had none: " in html
    # and back: the same cases are fixed
    result = _replay(store, ref, "golden_distill.datasets.replay.agents:reissue", out)
    assert f": 0 case(s) newly with differences, {len(changed)} fixed" in result.output
