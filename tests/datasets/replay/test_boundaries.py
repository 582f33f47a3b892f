"""Every boundary replays: recorded model steps served by occurrence (content, tokens, finish
reason), routes likewise, so a full replay makes zero model calls; ``--live`` sends chosen
boundaries to registered implementations (writes stay sandboxed); a recorded failure is
re-raised; a count mismatch says the fixture needs re-recording."""

from __future__ import annotations

import asyncio
import json

import pyarrow as pa
import pytest
import replay_agents as agents
from typer.testing import CliRunner

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.case import Agent, Case, Context, Outcome, Step
from golden_distill.datasets.replay import (
    AgentResult,
    AgentUsageError,
    ModelResponse,
    ToolCallError,
    register_live,
    replay_case,
    replay_cases,
)
from golden_distill.datasets.replay.boundaries import FixtureMismatch, LiveError
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.store.publish import publish_version

PLAN = json.dumps(
    {"choices": [{"message": {"content": "refund the order"}, "finish_reason": "tool_calls"}]}
)
DONE = json.dumps({"content": "Refunded 120 EUR.", "finish_reason": "stop"})


def _tool(seq: int, name: str, args: str, response: str, write: bool) -> Step:
    return Step(
        seq=seq,
        kind="tool",
        name=name,
        occurrence=1,
        arguments=args,
        canonical_args_sha256=canonical_args_sha256(args),
        response=response,
        is_mutating=write,
    )


def _case(case_id: str = "c_model", last_model: dict | None = None) -> Case:
    steps = [
        Step(seq=0, kind="model", name="gpt-test", occurrence=1, response=PLAN, tokens=120),
        Step(seq=1, kind="route", name="triage", occurrence=1, response='"billing"'),
        _tool(2, "kb_search", '{"query":"refund"}', '{"hits":["KB-1"]}', False),
        _tool(
            3,
            "erp_refund",
            '{"orderId":"O-1","amount":120}',
            '{"orderId":"O-1","status":"REFUNDED"}',
            True,
        ),
        Step(
            **{
                "seq": 4,
                "kind": "model",
                "name": "gpt-test",
                "occurrence": 2,
                "response": DONE,
                "tokens": 40,
                **(last_model or {}),
            }
        ),
    ]
    return Case(
        case_id=case_id,
        steps=steps,
        user_input="refund O-1",
        agent=Agent(agent_version="1.0", model_name="gpt-test"),
        context=Context(baseline_state='{"order:O-1": "PAID"}'),
        outcome=Outcome(answer_text="Refunded 120 EUR."),
    )


def test_a_full_replay_serves_the_model_and_the_routes_with_zero_model_calls() -> None:
    agents.LIVE_CALLS.clear()
    run = replay_case(agents.model_agent, _case())
    assert run.check.diffs == [] and agents.LIVE_CALLS == []
    assert run.result.answer == "Refunded 120 EUR." and run.result.intent == "billing"
    assert run.check.replayed_tokens == run.check.recorded_tokens == 160

    seen = {}

    def agent(case, tools):
        seen["plan"] = tools.llm.complete([{"role": "user", "content": "hi"}], temperature=0)
        return AgentResult()

    replay_case(agent, _case())
    plan = seen["plan"]
    assert (plan.content, plan.tokens, plan.finish_reason) == (
        "refund the order",
        120,
        "tool_calls",
    )


def test_more_model_calls_than_recorded_say_the_fixture_needs_re_recording() -> None:
    raised = []

    def agent(case, tools):
        for _ in range(3):
            try:
                tools.llm.complete([])
            except FixtureMismatch as exc:
                raised.append(str(exc))
        return AgentResult()

    run = replay_case(agent, _case())
    assert raised == [
        "gpt-test: recorded error: model boundary 'gpt-test' called more than the "
        "2 recorded time(s): the fixture needs re-recording (or run this boundary "
        "--live)"
    ]
    (row,) = [d for d in run.check.diffs if d.tool == "gpt-test"]
    assert row.diff_type == "extra_call" and row.position == "model call 3"
    assert "the fixture needs re-recording" in row.detail
    # fewer: the row says how many of the recorded calls were made
    once = replay_case(lambda case, tools: (tools.llm.complete([]), AgentResult())[1], _case())
    (row,) = [d for d in once.check.diffs if d.tool == "gpt-test"]
    assert row.diff_type == "missing_call"
    assert row.detail == (
        "model boundary gpt-test: called 1 of 2 recorded time(s); the fixture may need re-recording"
    )


def test_a_recorded_model_failure_is_re_raised() -> None:
    case = _case(last_model={"status": "timeout", "error": "upstream timeout", "response": None})
    caught = []

    def agent(case, tools):
        tools.llm.complete([])
        try:
            tools.llm.complete([])
        except ToolCallError as exc:
            caught.append((exc.status, exc.error))
        return AgentResult()

    replay_case(agent, case)
    assert caught == [("timeout", "upstream timeout")]


def test_live_boundaries_run_their_registered_implementation_writes_stay_sandboxed() -> None:
    agents.LIVE_CALLS.clear()
    run = replay_cases(
        [_case()], agents.model_agent, baseline_version="x", live=["llm", "erp_refund"]
    )
    # the model ran live twice; the write named live was still served by the sandbox
    assert agents.LIVE_CALLS == ["llm", "llm"]
    case_run = run.runs[0]
    assert case_run.result.answer == "a live answer"
    assert {d.diff_type for d in case_run.check.diffs} == {"answer_diff"}  # low: the gate passes
    assert run.exit_code == 0
    with pytest.raises(
        LiveError, match="'lmm': no live implementation registered; did you mean 'llm'"
    ):
        replay_cases([_case()], agents.model_agent, baseline_version="x", live=["lmm"])


def test_the_command_line_replays_model_steps_and_cuts_at_live(tmp_path) -> None:
    from golden_distill.flows.cli import app

    cases = [_case(f"c_model_{i}") for i in range(3)]
    table = pa.Table.from_pylist([c.to_row() for c in cases], schema=CASE_SCHEMA)
    store = str(tmp_path / "store")
    ref = f"models@{publish_version(store, 'models', cases=table).version}"
    base = ["replay", ref, "--store", store, "--agent", "replay_agents:model_agent"]
    cli = CliRunner()
    agents.LIVE_CALLS.clear()
    full = cli.invoke(app, [*base, "--out", str(tmp_path / "full")])
    assert full.exit_code == 0 and ": 3 cases, 0 diffs, gate PASS" in full.output
    assert agents.LIVE_CALLS == []  # zero model calls
    cut = cli.invoke(app, [*base, "--out", str(tmp_path / "cut"), "--live", "llm"])
    assert cut.exit_code == 0, cut.output
    assert agents.LIVE_CALLS == ["llm"] * 6
    bad = cli.invoke(app, [*base, "--out", str(tmp_path / "bad"), "--live", "nosuch"])
    assert bad.exit_code == 2 and "--live 'nosuch': no live implementation registered" in bad.output


def test_the_re_issuing_agent_replays_model_and_route_steps_in_place() -> None:
    from golden_distill.datasets.replay.agents import reissue

    run = replay_case(reissue, _case())
    assert run.check.diffs == []
    assert run.result.answer == "Refunded 120 EUR."
    # every recorded boundary served once, in recorded order
    assert run.check.replayed_calls == run.check.recorded_calls == 2


LOOPS: list[tuple[str, object]] = []


@register_live("gpt-test")
async def _live_model(messages, **params):
    await asyncio.sleep(0)
    LOOPS.append(("model", asyncio.get_running_loop()))
    return ModelResponse("an async live answer", tokens=3)


@register_live("triage")
async def _live_route(payload):
    await asyncio.sleep(0)
    LOOPS.append(("route", asyncio.get_running_loop()))
    return "async-queue"


@register_live("kb_search")
async def _live_search(arguments):
    await asyncio.sleep(0)
    LOOPS.append(("kb_search", asyncio.get_running_loop()))
    return {"hits": ["live-" + arguments["query"]]}


ASYNC_LIVE = ["gpt-test", "triage", "kb_search"]


def test_async_live_implementations_are_awaited_on_the_agents_loop() -> None:
    LOOPS.clear()
    seen = {}

    async def agent(case, tools):
        seen["loop"] = asyncio.get_running_loop()
        plan = await tools.llm.acomplete([{"role": "user", "content": "hi"}])
        queue = await tools.aroute("triage", {"text": "hi"})
        hits = await tools.acall("kb_search", {"query": "refund"})
        await tools.acall("erp_refund", {"orderId": "O-1", "amount": 120})
        return AgentResult(answer=plan.content, intent=queue, final_state=str(hits))

    run = replay_cases([_case()], agent, baseline_version="x", live=ASYNC_LIVE)
    result = run.runs[0].result
    assert (result.answer, result.intent) == ("an async live answer", "async-queue")
    assert result.final_state == "{'hits': ['live-refund']}"
    assert [k for k, _ in LOOPS] == ["model", "route", "kb_search"]
    assert all(loop is seen["loop"] for _, loop in LOOPS)  # the agent's own event loop
    assert [c.match for c in run.runs[0].calls] == ["live", "exact"]


def test_a_plain_agent_runs_async_live_implementations_to_completion() -> None:
    LOOPS.clear()
    run = replay_cases([_case()], agents.model_agent, baseline_version="x", live=ASYNC_LIVE)
    case_run = run.runs[0]
    assert case_run.agent_error is None
    assert (case_run.result.answer, case_run.result.intent) == (
        "an async live answer",
        "async-queue",
    )
    assert [k for k, _ in LOOPS] == ["model", "route", "kb_search", "model"]
    assert len({id(loop) for _, loop in LOOPS}) == 1  # one loop kept across the calls


def test_an_async_agent_not_awaiting_an_async_live_implementation_is_a_usage_error() -> None:
    async def agent(case, tools):
        tools.call("kb_search", {"query": "refund"})  # not awaited: its loop is busy
        return AgentResult()

    with pytest.raises(AgentUsageError, match=r"live 'kb_search' is async .* await the call"):
        replay_cases([_case()], agent, baseline_version="x", live=["kb_search"])
