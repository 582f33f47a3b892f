"""The mutant catalogue: each mutant changes exactly the boundary it names, and says when a case
gives it nothing to change."""

from __future__ import annotations

from dataclasses import replace

import pytest

from golden_distill.datasets.replay.contract import BaselineCall, ReplayInput
from golden_distill.datasets.replay.mutants import MUTANTS, UNRECORDED_TOOL

READ = BaselineCall(0, "erp_get_order", {"orderId": "ORD-17"}, False)
PAY = BaselineCall(1, "fin_pay", {"orderId": "ORD-17", "amount": 120, "currency": "EUR"}, True)
SHIP = BaselineCall(2, "erp_update_order", {"orderId": "ORD-17", "status": "SHIPPED"}, True)
NOTE = BaselineCall(3, "crm_note", {"customer": {"customerId": "C-9"}, "text": "done"}, True)


def _case(*calls: BaselineCall, intent: str | None = "ship") -> ReplayInput:
    return ReplayInput(
        case_id="c_1", user_input="ship it", messages=[], memory=None, retrieved_chunks=[],
        baseline_state=None, recorded_at=None, intent=intent, agent_version="1",
        model_name="m", system_prompt_version=None, baseline_calls=calls,
        recorded_final_state="SHIPPED", recorded_answer="shipped",
    )  # fmt: skip


def _plan(name: str, case: ReplayInput):
    return MUTANTS[name]().plan(case)


def test_the_catalogue_is_fixed_and_described() -> None:
    assert list(MUTANTS) == [
        "drop_write", "duplicate_write", "swap_writes", "reorder_writes", "change_amount",
        "change_id", "change_status", "unrecorded_tool", "skip_read", "other_intent",
    ]  # fmt: skip
    assert all(cls.name == name and cls.describes for name, cls in MUTANTS.items())


def test_write_order_mutants() -> None:
    case = _case(READ, PAY, SHIP, NOTE)
    assert _plan("drop_write", case).calls == (READ, SHIP, NOTE)
    assert _plan("duplicate_write", case).calls == (READ, PAY, PAY, SHIP, NOTE)
    assert _plan("swap_writes", case).calls == (READ, SHIP, PAY, NOTE)
    assert _plan("reorder_writes", case).calls == (READ, SHIP, NOTE, PAY)
    # two writes: no reorder distinct from a swap; one (repeated) write: nothing to swap
    assert _plan("reorder_writes", _case(READ, PAY, SHIP)) is None
    assert _plan("swap_writes", _case(PAY, replace(PAY, seq=9))) is None
    assert _plan("drop_write", _case(READ)) is None


@pytest.mark.parametrize(
    ("name", "call", "changed"),
    [
        ("change_amount", PAY, {"orderId": "ORD-17", "amount": 132, "currency": "EUR"}),
        ("change_id", SHIP, {"orderId": "ORD-11", "status": "SHIPPED"}),
        ("change_status", SHIP, {"orderId": "ORD-17", "status": "CANCELLED"}),
    ],
)
def test_argument_mutants_change_one_argument_of_the_first_write(name, call, changed) -> None:
    case = _case(READ, call, NOTE)
    plan = _plan(name, case)
    assert plan.calls[1].arguments == changed and plan.calls[1].name == call.name
    assert plan.calls[0] == READ and plan.calls[2] == NOTE
    assert call.arguments != changed  # the recording itself is untouched


def test_argument_mutants_reach_nested_and_text_values() -> None:
    text_amount = BaselineCall(1, "fin_pay", {"payment": {"total": "1,905.70"}}, True)
    assert _plan("change_amount", _case(text_amount)).calls[0].arguments == {
        "payment": {"total": "2096.27"}
    }
    assert _plan("change_id", _case(NOTE)).calls[0].arguments["customer"] == {"customerId": "C-1"}
    # no write holds an id: the first read's id changes instead
    assert _plan("change_id", _case(READ)).calls[0].arguments == {"orderId": "ORD-11"}
    assert _plan("change_status", _case(READ, PAY)) is None


def test_unrecorded_tool_skipped_read_and_other_intent() -> None:
    case = _case(READ, PAY)
    calls = _plan("unrecorded_tool", case).calls
    assert [c.name for c in calls] == ["erp_get_order", UNRECORDED_TOOL, "fin_pay"]
    assert _plan("skip_read", case).calls == (PAY,)
    assert _plan("skip_read", _case(PAY)) is None
    # the read a later write depends on (same entity) is the one skipped
    lookup = BaselineCall(5, "kb_search", {"query": "shipping"}, False)
    assert _plan("skip_read", _case(lookup, READ, SHIP)).calls == (lookup, SHIP)
    assert _plan("skip_read", _case(lookup, READ, NOTE)).calls == (READ, NOTE)
    plan = _plan("other_intent", case)
    assert plan.intent == "not_ship" and plan.calls == case.baseline_calls
    assert _plan("other_intent", _case(READ, intent=None)) is None
