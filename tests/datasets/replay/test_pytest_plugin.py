"""The pytest plugin (pytest11 entry point), exercised with pytester: tests taking
``golden_case`` run once per case (ids are case ids); the verdict is the CLI gate's over the run
(a ``[golden-gate]`` item per test function; a case fails alone only when it alone crosses a red
line; P2 lines are pytest warnings); funnels and splits filter, an unknown one is a usage error;
without a set the tests skip with the reason."""

from __future__ import annotations

import pytest

from golden_distill.datasets.reader import open_set

pytest_plugins = ("pytester",)

TEST_FILE = """
import replay_agents
from golden_distill.datasets.replay.agents import reissue


def test_reissue(golden_case, golden_replay):
    run = golden_replay(reissue, golden_case)
    assert run.check.diffs == []


def test_drop_write(golden_case, golden_replay):
    golden_replay(replay_agents.drop_write, golden_case)
"""


def test_one_test_per_case_and_failures_carry_diff_lines(pytester, small_set) -> None:
    store, ref, ids, _ = small_set
    pytester.makepyfile(test_golden=TEST_FILE)
    result = pytester.runpytest(
        "--golden-store", store, "--golden-set", ref, "-p", "no:cacheprovider"
    )
    # 8 cases and the gate for each test function; every case drops a write: P0 for each
    result.assert_outcomes(passed=8 + 1, failed=8 + 1)
    passed = [f"test_golden.py::test_reissue[[]{i}[]] PASSED" for i in ids]
    result = pytester.runpytest("--golden-store", store, "--golden-set", ref, "-v",
                                "-k", "test_reissue", "-p", "no:cacheprovider")  # fmt: skip
    result.stdout.fnmatch_lines_random([f"*{line}*" for line in passed])
    result.stdout.fnmatch_lines(["*test_reissue[[]golden-gate[]] PASSED*"])
    failed = pytester.runpytest("--golden-store", store, "--golden-set", ref,
                                "-k", "test_drop_write", "-p", "no:cacheprovider")  # fmt: skip
    failed.assert_outcomes(failed=9)
    failed.stdout.fnmatch_lines_random([
        "*P0 write_diffs (fails the gate whatever the other cases do)*",
        "*: high missing_call (recorded call *): * (recorded call *) was never called*",
        "*golden gate FAIL over 8 case(s) of *test_drop_write:*",
        "*P0 write_diffs: * (limit 0) FAIL*"])  # fmt: skip


CASE_AND_GATE = """
import replay_agents

CHANGED = {changed!r}


def test_tweak(golden_case, golden_replay):
    golden_replay(replay_agents.change_read(CHANGED), golden_case)


def test_add_read(golden_case, golden_replay):
    golden_replay(replay_agents.add_read, golden_case)
"""


def test_the_plugin_gives_the_cli_verdict(pytester, small_set, tmp_path, monkeypatch) -> None:
    """A medium parameter diff in one case crosses P1 for that case alone (4 of 5 calls equal)
    but not over the run: the CLI passes, so does every test; an added read per case crosses
    P2 step drift: a pytest warning, not a failure."""
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    store, ref, ids, _ = small_set
    gate = tmp_path / "gate.yaml"
    gate.write_text("gate:\n  p1:\n    min_parameter_parity: 0.95\n")
    pytester.makepyfile(test_golden=CASE_AND_GATE.format(changed={ids[0]}))
    options = ["--golden-store", store, "--golden-set", ref, "--golden-gate", str(gate)]
    result = pytester.runpytest(*options, "-p", "no:cacheprovider", "-k", "test_tweak")
    result.assert_outcomes(passed=9)
    agent = tmp_path / "agents" / "tweak_agent.py"
    agent.parent.mkdir()
    agent.write_text(f"import replay_agents\nrun = replay_agents.change_read({{{ids[0]!r}}})\n")
    monkeypatch.syspath_prepend(str(agent.parent))
    cli = CliRunner().invoke(app, ["replay", ref, "--store", store, "--out", str(tmp_path / "o"),
                                   "--gate", str(gate), "--agent", "tweak_agent:run"])  # fmt: skip
    assert cli.exit_code == 0, cli.output  # the same verdict from the command line
    assert "P1 parameter_parity" not in cli.output
    warned = pytester.runpytest(*options, "-p", "no:cacheprovider", "-k", "test_add_read")
    warned.assert_outcomes(passed=9, warnings=1)
    warned.stdout.fnmatch_lines(["*GoldenGateWarning: golden gate: P2 step_drift*WARN*"])


def test_an_unknown_funnel_is_a_usage_error_with_a_suggestion(pytester, small_set) -> None:
    store, ref, _, _ = small_set
    pytester.makepyfile(test_golden=TEST_FILE)
    options = ["--golden-store", store, "--golden-set", ref, "-p", "no:cacheprovider"]
    hints = {"nosuch": "funnels: other, recovery",
             "Recovery": "did you mean 'recovery'? (names are case-sensitive)"}  # fmt: skip
    for funnel, hint in hints.items():
        bad = pytester.runpytest(*options, "--golden-funnel", funnel)
        assert bad.ret == pytest.ExitCode.USAGE_ERROR
        bad.stderr.fnmatch_lines([f"*--golden-funnel {funnel!r} is not a funnel of small@*{hint}*"])


def test_an_agent_breaking_the_contract_stops_the_run(pytester, small_set) -> None:
    store, ref, _, _ = small_set
    pytester.makepyfile(
        test_golden="""
async def not_awaited(case, tools):
    return None


def test_coroutine(golden_case, golden_replay):
    golden_replay(lambda case, tools: not_awaited(case, tools), golden_case)
"""
    )
    result = pytester.runpytest("--golden-store", store, "--golden-set", ref,
                                "-p", "no:cacheprovider")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*usage error: agent *<lambda> returned a coroutine, not "
                                 "AgentResult: declare it `async def`*"])  # fmt: skip


def test_funnel_selects_cases(pytester, small_set) -> None:
    store, ref, _, recovery = small_set
    pytester.makepyfile(test_golden=TEST_FILE)
    options = ["--golden-store", store, "--golden-set", ref, "--golden-funnel", "recovery"]
    result = pytester.runpytest(*options, "-k", "test_reissue", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(recovery) + 1)  # and the gate
    result.stdout.fnmatch_lines_random([f"*test_reissue[[]{i}[]] PASSED*" for i in recovery])


def test_split_selects_cases_and_an_unknown_split_is_a_usage_error(pytester, small_set) -> None:
    store, ref, _, _ = small_set
    regression = open_set(store, ref).read_table(split="regression").column("case_id").to_pylist()
    assert len(regression) == 3
    pytester.makepyfile(test_golden=TEST_FILE)
    options = ["--golden-store", store, "--golden-set", ref, "-p", "no:cacheprovider"]
    result = pytester.runpytest(
        *options, "--golden-split", "regression", "-k", "test_reissue", "-v"
    )
    result.assert_outcomes(passed=3 + 1)  # and the gate
    result.stdout.fnmatch_lines_random([f"*test_reissue[[]{i}[]] PASSED*" for i in regression])
    bad = pytester.runpytest(*options, "--golden-split", "test")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--golden-split 'test': one of dev, regression, holdout*"])


def test_without_a_set_tests_skip_with_the_reason(pytester) -> None:
    pytester.makepyfile(test_golden=TEST_FILE)
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*no golden set: pass --golden-store and --golden-set*"])
