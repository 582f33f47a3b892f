"""Virtual tool stubs: retries replay in order, stage-2 tolerant matches, synthetic receipts and
the write sandbox, stub escapes, and determinism (clock, uuid, secrets, random) across replays."""

from __future__ import annotations

import copy
import random
import re
import secrets
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from golden_distill.datasets.canonical_json import canonical_json
from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.reader import GoldenSet
from golden_distill.datasets.replay import (
    AgentResult,
    ReplayConfig,
    StubEscape,
    ToolCallError,
    replay_case,
)
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.replay.config import MatchingSection
from golden_distill.datasets.replay.stubs import VirtualTools


def _retried(golden: GoldenSet) -> Case:
    """A case where a failed call was repeated with the same arguments."""
    for replay_case_ in golden.cases():
        case = replay_case_.case
        seen: dict = {}
        for step in case.steps:
            key = (step.name, step.canonical_args_sha256)
            if key in seen and seen[key].status != "ok":
                return case
            seen[key] = step
    raise AssertionError("no retried call in the set")


def test_retries_replay_in_order(generated_set) -> None:
    from golden_distill.datasets.reader import open_set

    golden = open_set(*generated_set)
    case = _retried(golden)
    run = replay_case(reissue, case, volatile_keys=golden.volatile_keys)
    assert run.check.diffs == []
    assert [c.recorded_seq for c in run.calls] == [s.seq for s in case.steps]
    assert [c.status for c in run.calls] == [s.status for s in case.steps]
    assert "error" in [c.status for c in run.calls]


def _case(steps: list[Step], **fields) -> Case:
    return Case(
        case_id="c_stub_test",
        trace_id="t-1",
        recorded_at=datetime(2026, 11, 28, 2, 14, tzinfo=UTC),
        steps=steps,
        **fields,
    )


def _step(seq: int, name: str, args: str, response: str, write: bool, **extra) -> Step:
    from golden_distill.datasets.canonical_json import canonical_args_sha256

    return Step(
        seq=seq, kind="tool", name=name, occurrence=1, arguments=args,
        canonical_args_sha256=canonical_args_sha256(args), response=response,
        is_mutating=write, **extra,
    )  # fmt: skip


ORDERS = [
    _step(0, "erp_get_order", '{"orderId":"O-1"}', '{"orderId":"O-1","status":"PENDING"}', False),
    _step(1, "mes_list_alarms", '{"machineId":"M-1","since":"2026-12-05"}', '{"alarms":[]}', False),
    _step(2, "erp_update_order", '{"orderId":"O-1","status":"SHIPPED","qty":1}',
          '{"orderId":"O-1","updated":true,"confirmationId":"CNF-1"}', True),
]  # fmt: skip


def test_stage_two_forgives_date_formats_added_false_options_and_number_forms() -> None:
    def agent(case, tools):
        tools.call("mes_list_alarms", {"machineId": "M-1", "since": "12/05/2026"})
        tools.call("erp_get_order", {"orderId": "O-1", "includeArchived": False})
        tools.call("erp_update_order", {"orderId": "O-1", "status": "SHIPPED", "qty": 1.0,
                                        "notify": None})  # fmt: skip
        return AgentResult()

    run = replay_case(agent, _case(copy.deepcopy(ORDERS)))
    assert [(c.name, c.match) for c in run.calls] == [
        ("mes_list_alarms", "tolerant"),
        ("erp_get_order", "tolerant"),
        ("erp_update_order", "tolerant"),
    ]
    assert run.check.diffs == []  # the normal form also decides parameter parity


def test_reads_fall_back_to_the_next_unused_call_writes_do_not() -> None:
    def agent(case, tools):
        tools.call("erp_get_order", {"orderId": "O-2"})  # differs: a read takes the next unused
        tools.call("erp_update_order", {"orderId": "O-1", "status": "CANCELLED", "qty": 1})
        return AgentResult()

    run = replay_case(agent, _case(copy.deepcopy(ORDERS)))
    assert [c.match for c in run.calls] == ["next_unused", "synthetic"]
    types = sorted((d.diff_type, d.severity) for d in run.check.diffs)
    assert types == [
        ("final_state_diff", "high"),  # O-1 ends CANCELLED, the recorded write left it otherwise
        ("missing_call", "medium"),  # the alarms read never made
        ("tool_param_diff", "high"),  # the write's status
        ("tool_param_diff", "medium"),  # the read's order id
        ("tool_seq_diff", "medium"),  # 2 calls for 3 recorded: ratio 0.67
    ]


def test_unmatched_write_gets_a_mock_receipt_and_later_reads_see_it() -> None:
    seen = {}

    def agent(case, tools):
        seen["receipt"] = tools.call(
            "erp_update_order", {"orderId": "O-1", "status": "CANCELLED", "qty": 1}
        )
        seen["order"] = tools.call("erp_get_order", {"orderId": "O-1"})
        return AgentResult()

    replay_case(agent, _case(copy.deepcopy(ORDERS)))
    # shaped like the recorded response: the entity id kept, new ids mock, marked as mock
    assert seen["receipt"] == {
        "orderId": "O-1", "updated": True, "confirmationId": "mock-erp_update_order-1",
        "mock": True,
    }  # fmt: skip
    assert seen["order"]["status"] == "CANCELLED"  # from the sandbox, not the recording


def test_a_tool_never_recorded_is_a_stub_escape_raised_inside_the_agent() -> None:
    caught = []

    def agent(case, tools):
        try:
            tools.call("payments_refund", {"orderId": "O-1"})
        except StubEscape as exc:
            caught.append(exc)
        reissue(case, tools)
        return AgentResult()

    run = replay_case(agent, _case(copy.deepcopy(ORDERS)))
    assert len(caught) == 1 and isinstance(caught[0], ToolCallError)
    assert [(d.diff_type, d.severity) for d in run.check.diffs] == [
        ("stub_escape", "high"),
        ("tool_seq_diff", "medium"),  # 4 calls for 3 recorded: ratio 1.33
    ]
    assert run.check.stub_escapes == 1


def test_recorded_error_comes_back_as_tool_call_error() -> None:
    steps = [_step(0, "kb_get", '{"docId":"K"}', None, False, status="error", error="E_UP")]
    tools = VirtualTools(steps, ReplayConfig().matching)
    with pytest.raises(ToolCallError) as err:
        tools.call("kb_get", '{"docId": "K"}')
    assert err.value.error == "E_UP" and err.value.status == "error"


def test_time_and_randomness_are_identical_across_replays() -> None:
    def agent(case, tools):
        readings = [datetime.now(UTC).isoformat(), time.time()]
        tools.call("erp_get_order", {"orderId": "O-1"})
        readings += [datetime.now(UTC).isoformat(), str(uuid.uuid4()), secrets.token_hex(8)]
        tools.call("mes_list_alarms", {"machineId": "M-1", "since": "2026-12-05"})
        readings += [datetime.now(UTC).isoformat(), random.random(), str(uuid.uuid4())]
        return AgentResult(extra={"readings": readings})

    case = _case(copy.deepcopy(ORDERS))
    first = replay_case(agent, case).result.extra["readings"]
    second = replay_case(agent, case).result.extra["readings"]
    assert first == second
    start = case.recorded_at
    tick = timedelta(milliseconds=ReplayConfig().determinism.tick_ms)
    assert first[0] == start.isoformat() and first[1] == start.timestamp()
    assert first[2] == (start + tick).isoformat()
    assert first[5] == (start + 2 * tick).isoformat()
    assert first[3] != first[7]  # successive uuids differ, but the same on every replay
    other = replay_case(agent, Case(**{**_asdict(case), "case_id": "c_other"}))
    assert other.result.extra["readings"][3] != first[3]  # seeded by the case id
    assert datetime.now(UTC) > start + timedelta(days=1)  # the real clock is back


def _asdict(case: Case) -> dict:
    return {f: getattr(case, f) for f in case.__dataclass_fields__}


def test_an_agent_that_raises_is_a_finding_without_its_message() -> None:
    def agent(case, tools):
        tools.call("erp_get_order", {"orderId": "O-1"})
        raise RuntimeError("customer jane.doe@example.com broke me")

    run = replay_case(agent, _case(copy.deepcopy(ORDERS), outcome=_outcome("DONE")))
    # the type and the line that raised it, never the message
    assert run.agent_error is not None and run.result is None
    assert re.fullmatch(r"RuntimeError at test_stubs\.py:\d+ in agent", run.agent_error)
    diffs = {(d.diff_type, d.severity, d.detail) for d in run.check.diffs}
    assert ("final_state_diff", "high", f"agent raised {run.agent_error}") in diffs
    assert "jane.doe" not in repr(run.check.diffs)


def test_report_escapes_what_it_shows() -> None:
    from golden_distill.datasets.replay.gate import evaluate
    from golden_distill.datasets.replay.report import render_report
    from golden_distill.datasets.replay.runner import ReplayRun

    def agent(case, tools):  # skips the write, answers with markup
        tools.call("erp_get_order", {"orderId": "O-1"})
        return AgentResult(answer="<script>alert(1)</script>")

    case = _case(copy.deepcopy(ORDERS), outcome=_outcome("DONE"))
    case.outcome.answer_text = "Order O-1 updated."
    case_run = replay_case(agent, case)
    gate, figures = evaluate([case_run.check], ReplayConfig().gate)
    now = datetime.now(UTC)
    html = render_report(ReplayRun("run_x", "s@1", "v2", now, now, [case_run], gate, figures))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "FAIL" in html and "final_state_diff" in html


def _outcome(state: str):
    from golden_distill.datasets.case import Outcome

    return Outcome(final_state=state)


@pytest.mark.parametrize(
    "arguments",
    [
        {"orderId": "O-1", "qty": 2},  # flat
        {"order": {"id": "O-1", "lines": [{"sku": "A", "qty": 1}]}, "b": [1, [2, {"c": 3}]]},
        {"order": {"id": "O-1", "meta": {"Request_ID": "r-9", "ts": 5}}, "x": [{"nonce": 1}]},
        [{"z": 1, "a": {"TraceId": "t"}}, 3],
        {"a": {1: "int key"}},  # non-str key: the full path
        "plain text",
        None,
    ],
)
def test_served_calls_carry_the_canonical_json_of_their_arguments(arguments) -> None:
    """The stubs' fast paths (nothing to strip) give exactly ``canonical_json``."""
    tools = VirtualTools([], MatchingSection())
    with pytest.raises(StubEscape):
        tools.call("unrecorded_tool", arguments)
    assert tools.log[0].canonical == canonical_json(arguments).decode()
