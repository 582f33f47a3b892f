"""A broken agent or a typo is a usage error (exit 2, the reason and the traceback in the
report), never thousands of diffs or a green gate over zero cases; ``async def`` agents work."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import replay_cases
from golden_distill.datasets.replay.agent_call import AgentUsageError

runner = CliRunner()


def _replay(store: str, ref: str, agent: str, out, *extra: str):
    return runner.invoke(
        app(), ["replay", ref, "--store", store, "--agent", agent, "--out", str(out), *extra]
    )


def app():
    from golden_distill.flows.cli import app as golden

    return golden


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("returns_coroutine", "returned a coroutine, not AgentResult: declare it `async def`"),
        ("returns_generator", "returned a generator, not AgentResult"),
        ("returns_dict", "returned dict, not AgentResult"),
        ("always_raises", "the agent raised on every case (295): KeyError at replay_agents.py"),
    ],
)
def test_a_broken_agent_is_a_usage_error_with_its_traceback(
    generated_set, tmp_path, agent: str, message: str
) -> None:
    store, ref = generated_set
    result = _replay(store, ref, f"replay_agents:{agent}", tmp_path / "o")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "o" / "run_summary.json").exists()  # no verdict was reached
    html = (tmp_path / "o" / "report.html").read_text()
    assert "usage error (exit 2)" in html and message.replace("`", "") in html.replace("`", "")
    if agent == "always_raises":  # the whole traceback, message included
        assert "Traceback (most recent call last)" in result.output
        assert "KeyError: &#x27;no such key&#x27;" in html and "in always_raises" in html


def test_an_async_agent_is_awaited_and_tools_have_acall(generated_set) -> None:
    import replay_agents

    golden = open_set(*generated_set)
    cases = [c.case for c in golden.cases()][:40]
    run = replay_cases(cases, replay_agents.async_reissue, baseline_version="x",
                       volatile_keys=golden.volatile_keys)  # fmt: skip
    assert [d for r in run.runs for d in r.check.diffs] == []
    assert run.gate.verdict == "pass"
    assert sum(r.check.replayed_calls for r in run.runs) > 100


def test_an_agent_raising_on_some_cases_is_a_finding(generated_set) -> None:
    import replay_agents

    golden = open_set(*generated_set)
    cases = [c.case for c in golden.cases()][:40]
    first = cases[0].case_id

    def sometimes(case, tools):
        if case.case_id == first:
            raise RuntimeError("boom")
        return replay_agents.reissue(case, tools)

    run = replay_cases(cases, sometimes, baseline_version="x", volatile_keys=golden.volatile_keys)
    assert {r.case.case_id for r in run.runs if r.check.diffs} == {first}
    (row,) = [d for d in run.runs[0].check.diffs if d.diff_type == "final_state_diff"]
    assert row.detail.startswith("agent raised RuntimeError at test_usage_errors.py:")
    assert "boom" not in repr(run.runs[0].check.diffs)  # never the message in a row
    assert run.exit_code == 1
    with pytest.raises(AgentUsageError, match="raised on every case"):
        replay_cases(cases[:1], sometimes, baseline_version="x")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--funnel", "nosuch", "--funnel 'nosuch' is not a funnel of small@"),
        ("--funnel", "Recovery", "did you mean 'recovery'? (names are case-sensitive)"),
        ("--split", "Regression", "--split 'Regression': one of dev, regression, holdout; did "
         "you mean 'regression'? (names are case-sensitive)"),
    ],
)  # fmt: skip
def test_an_unknown_funnel_or_split_is_a_usage_error_with_a_suggestion(
    small_set, tmp_path, option: str, value: str, message: str
) -> None:
    store, ref, _, recovery = small_set
    agent = "golden_distill.datasets.replay.agents:reissue"
    result = _replay(store, ref, agent, tmp_path / "o", option, value)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "o").exists()
    # the real name replays
    if option == "--funnel":
        good = _replay(store, ref, agent, tmp_path / "o", option, "recovery")
        assert good.exit_code == 0 and f": {len(recovery)} cases, 0 diffs" in good.output
