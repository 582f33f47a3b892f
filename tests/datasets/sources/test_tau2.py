"""The tau2-bench reader on the results JSON tau2 writes (tests/data/tau2: built with tau2's own
pydantic model, see build_fixture.py there): recognised without `--format`, one case per
simulation with its task's expected actions and its reward, bad simulations quarantined by
position and reason; round trips: replayed with the re-issuing agent (expected writes met,
gate passes), and exported as chat-jsonl then read back to the same steps."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.case import Case
from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.quarantine import Quarantine, read_quarantine
from golden_distill.datasets.replay import replay_cases
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.replay.export import export_cases
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.tau2 import Tau2Adapter

FIXTURE = Path(__file__).parents[2] / "data" / "tau2" / "airline-simulations.json"
RESULTS = orjson.loads(FIXTURE.read_bytes())


def _read(path: Path, tmp_path: Path, name: str = "out") -> tuple[list[Case], object]:
    summary = ingest([str(path)], tmp_path / name)
    if not summary.shards:
        return [], summary
    table = pa.concat_tables([pq.read_table(p) for p in summary.shards])
    return [Case.from_row(r) for r in table.to_pylist()], summary


def test_each_simulation_is_a_case_with_its_task_and_reward(tmp_path) -> None:
    assert Tau2Adapter.sniff(str(FIXTURE), FIXTURE.read_bytes()[:65536])
    cases, summary = _read(FIXTURE, tmp_path)
    assert summary.sources[0].format == "tau2" and summary.quarantined_total == 0
    sims = RESULTS["simulations"]
    assert [c.case_id for c in cases] == [make_case_id("tau2", s["id"]) for s in sims]
    tasks = {t["id"]: t for t in RESULTS["tasks"]}
    policy = RESULTS["info"]["environment_info"]["policy"]
    for case, sim in zip(cases, sims, strict=True):
        assert case.source.position == sims.index(sim) + 1
        assert case.trace_id == sim["id"] and case.outcome.reward == sim["reward_info"]["reward"]
        assert case.outcome.status == sim["termination_reason"]
        assert case.agent.model_name == RESULTS["info"]["agent_info"]["llm"]
        assert case.agent.system_prompt_version == (
            "sha256:" + hashlib.sha256(policy.encode()).hexdigest()
        )
        first_user = next(m for m in sim["messages"] if m["role"] == "user")
        assert case.user_input == first_user["content"]
        # every agent tool call is a step, answered by its tool message, in call order
        calls = [
            (c["name"], c["arguments"], m["timestamp"])
            for m in sim["messages"]
            if m["role"] == "assistant"
            for c in m["tool_calls"] or []
        ]
        replies = {m["id"]: m for m in sim["messages"] if m["role"] == "tool"}
        tool_steps = [s for s in case.steps if s.kind in ("tool", "handoff")]
        assert [(s.name, orjson.loads(s.arguments)) for s in tool_steps] == [
            (n, a) for n, a, _ in calls
        ]
        call_ids = [c["id"] for m in sim["messages"] for c in m.get("tool_calls") or []]
        for step, call_id in zip(tool_steps, call_ids, strict=True):
            reply = replies[call_id]
            assert step.status == ("error" if reply["error"] else "ok")
            assert step.parent_seq is not None
            assert case.steps[step.parent_seq].kind == "model"
        # every assistant turn after the user spoke is a model call with its tokens
        turns = [m for m in sim["messages"] if m["role"] == "assistant"][1:]  # no greeting
        models = [s for s in case.steps if s.kind == "model"]
        assert [s.tokens for s in models] == [
            m["usage"]["prompt_tokens"] + m["usage"]["completion_tokens"] for m in turns
        ]
        # a model step's response is the assistant turn (what a model stub serves back)
        last = orjson.loads(models[-1].response)
        assert last["content"] == case.outcome.answer_text and last["finish_reason"] == "stop"
        first = orjson.loads(models[0].response)
        assert first["finish_reason"] == "tool_calls"
        assert [c["name"] for c in first["tool_calls"]] == [
            c["name"] for c in turns[0]["tool_calls"]
        ]
        # the task's expected writes (reads and the hand-off left out; compare_args kept)
        task = tasks[sim["task_id"]]
        writes = [
            a for a in task["evaluation_criteria"]["actions"] if a["name"].startswith("update_")
        ]
        assert case.expected.source == "tau_bench_task"
        assert [(a.name, orjson.loads(a.arguments)) for a in case.expected.actions] == [
            (a["name"], a["arguments"]) for a in writes
        ]
    failed = cases[1]
    assert [(s.name, s.occurrence, s.status) for s in failed.steps if s.kind == "tool"] == [
        ("get_reservation_details", 1, "ok"),
        ("update_reservation_flights", 1, "error"),
        ("update_reservation_flights", 2, "ok"),
    ]
    assert failed.steps[3].error == "Error: Basic economy flights cannot be modified"
    transfer = cases[2]
    assert transfer.outcome.handoff is True
    assert transfer.outcome.handoff_reason.startswith("User wants to change")
    assert [s.parent_seq for s in transfer.steps[1:3]] == [0, 0]  # two calls in one turn


def _broken(tmp_path: Path) -> Path:
    results = orjson.loads(FIXTURE.read_bytes())
    good, failed, transfer = results["simulations"]
    voice = dict(failed, id="v-1", messages=None, ticks=[])
    unknown = dict(good, id="u-1", task_id="99")
    orphan = dict(transfer, id="o-1")
    orphan["messages"] = [m for m in transfer["messages"] if m.get("tool_calls") is None]
    no_id = dict(good, id=None)
    results["simulations"] = [good, voice, 42, unknown, orphan, no_id, failed]
    path = tmp_path / "broken.json"
    text = orjson.dumps(results, option=orjson.OPT_INDENT_2)
    cut = text.rindex(b'"termination_reason"')  # the file ends inside the last simulation
    path.write_bytes(text[:cut])
    return path


def test_bad_simulations_are_quarantined_by_position_and_reason(tmp_path) -> None:
    cases, summary = _read(_broken(tmp_path), tmp_path)
    assert [c.trace_id for c in cases] == [RESULTS["simulations"][0]["id"]]
    entries = read_quarantine(tmp_path / "out" / "quarantine.jsonl")
    assert [(e["position"], e["reason"]) for e in entries] == [
        (2, "missing_field"),
        (3, "not_an_object"),
        (4, "missing_field"),
        (5, "orphan_tool_reply"),
        (6, "missing_field"),
        (7, "truncated_stream"),
    ]
    assert entries[0]["detail"].startswith("simulations[2].messages")
    assert entries[2]["detail"] == "simulations[4].task_id (no such task in `tasks`)"
    assert entries[3]["detail"].startswith("simulations[5].messages[")
    assert all(e["uri"].endswith("broken.json") for e in entries)
    assert summary.records_read == summary.cases_written + len(entries) == 7


def test_replayed_with_the_reissuing_agent_the_gate_passes(tmp_path) -> None:
    cases, _ = _read(FIXTURE, tmp_path)
    run = replay_cases(cases, reissue, baseline_version="tau2@fixture")
    assert run.gate.verdict == "pass"
    assert [r.check.diffs for r in run.runs] == [[], [], []]
    assert [r.check.final_state_checked for r in run.runs] == [True, True, True]


def test_chat_export_reads_back_to_the_same_steps(tmp_path) -> None:
    cases, _ = _read(FIXTURE, tmp_path)
    paths = list(export_cases(cases, "chat-jsonl", tmp_path / "chat"))
    adapter = ChatAdapter()
    for case, path in zip(cases, paths, strict=True):
        [row] = list(adapter.read(str(path), Quarantine(), ReadStats()))
        back = Case.from_row(row)
        assert back.steps == case.steps
        assert (back.user_input, back.outcome.reward, back.expected) == (
            case.user_input,
            case.outcome.reward,
            case.expected,
        )
