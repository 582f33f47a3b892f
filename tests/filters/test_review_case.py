"""One case as a reviewer reads it (filters/review_case.py) and a page decision as a log entry
(filters/review.py ``page_entry``: the sheet's checks, the sheet's entry)."""

from __future__ import annotations

import json

import pytest

from golden_distill.filters.review import check_row, log_lines, page_entry
from golden_distill.filters.review_case import (
    case_view,
    expected_text,
    pretty_json,
    transcript,
    transcript_text,
    trust_reason,
)

MESSAGES = [
    {"role": "user", "content": "Refund order <ORD_1>"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "1", "function": {"name": "get_order", "arguments": '{"order_id": "o1"}'}}]},
    {"role": "tool", "name": "get_order", "tool_call_id": "1", "content": '{"status": "paid"}'},
    {"role": "assistant", "content": [{"type": "text", "text": "Refunded."}]},
]  # fmt: skip


def _row(**extra):
    row = {
        "case_id": "c_1",
        "user_input": "Refund order <ORD_1>",
        "context": {"messages": json.dumps(MESSAGES)},
        "steps": [
            {"seq": 0, "kind": "tool", "name": "get_order", "occurrence": 1, "status": "ok",
             "arguments": '{"order_id":"o1"}', "response": '{"status":"paid"}', "error": None,
             "system": "ERP", "is_mutating": False, "latency_ms": 3},
        ],
        "outcome": {"answer_text": "Refunded.", "final_state": "REFUNDED", "reward": 1.0},
        "expected": {"final_state": "REFUNDED", "source": "native",
                     "actions": [{"name": "refund", "arguments": '{"order_id":"o1"}'}],
                     "answer_facts": ["refunded"]},
        "funnels": ["recovery", "redacted"],
        "funnel_reasons": json.dumps({"recovery": "get_order failed, then ok"}),
        "value_score": 2.5, "split": "dev", "trust": "oracle",
        "cluster_id": "k1", "cluster_size": 3,
    }  # fmt: skip
    row.update(extra)
    return row


def test_the_transcript_is_the_recorded_conversation_with_tool_calls_and_replies():
    turns = transcript(_row())
    assert [t["role"] for t in turns] == ["user", "assistant", "tool get_order", "assistant"]
    assert turns[1]["tool_calls"] == [{"name": "get_order", "arguments": '{"order_id": "o1"}'}]
    assert turns[2]["text"] == '{"status": "paid"}' and turns[3]["text"] == "Refunded."
    text = transcript_text(_row())
    assert text.splitlines()[0] == "[user] Refund order <ORD_1>"
    assert '[assistant] -> get_order({"order_id": "o1"})' in text


def test_without_recorded_messages_the_transcript_is_request_steps_and_answer():
    turns = transcript(_row(context={"messages": None}))
    assert [t["role"] for t in turns] == ["user", "tool get_order", "assistant"]
    assert turns[1]["text"] == '{"status":"paid"}'
    assert turns[1]["tool_calls"][0]["arguments"] == '{"order_id":"o1"}'


def test_expected_outcome_and_json_are_readable():
    assert expected_text(_row()).splitlines() == [
        "final_state: REFUNDED", 'action: refund({"order_id":"o1"})', "answer fact: refunded",
        "source: native",
    ]  # fmt: skip
    assert expected_text(_row(expected=None)) == ""
    assert pretty_json('{"b":1,"a":[2]}') == '{\n  "b": 1,\n  "a": [\n    2\n  ]\n}'
    assert pretty_json("not json <x>") == "not json <x>"


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"trust": "human"}, "a reviewer confirmed it"),
        ({"trust": "human", "expected": {"final_state": "X", "source": "review"}},
         "corrected its expected outcome"),
        ({"trust": "oracle", "expected": {"final_state": None, "source": "tau_bench_task"}},
         "task definition (tau_bench_task)"),
        ({"trust": "oracle"}, "reached its recorded expected final state (REFUNDED)"),
        ({"trust": "oracle", "expected": None}, "rewarded (reward 1.0)"),
        ({"trust": "unconfirmed", "outcome": {"final_state": "OPEN", "reward": 0.0}},
         "a failed run (reward 0.0, final state OPEN is not the expected REFUNDED)"),
        ({"trust": "unconfirmed", "expected": None, "outcome": {"reward": None}},
         "no oracle or reviewer vouches"),
    ],
)  # fmt: skip
def test_trust_reason_names_what_earned_the_tier(extra, says):
    assert says in trust_reason(_row(**extra))


def test_case_view_has_why_and_cluster_members_in_rank_order():
    members = [
        {"case_id": "c_3", "role": "member", "merged_by": "near", "rank": 2,
         "distance_to_representative": 0.1},
        {"case_id": "c_1", "role": "representative", "merged_by": None, "rank": 0,
         "distance_to_representative": 0.0},
        {"case_id": "c_2", "role": "member", "merged_by": "exact", "rank": 1,
         "distance_to_representative": 0.0},
    ]  # fmt: skip
    view = case_view(_row(), members, {"c_1", "c_3"}, "new", "12")
    assert view["why"]["reasons"] == {"recovery": "get_order failed, then ok"}
    assert view["why"]["task"] == "12" and view["why"]["trust"] == "oracle"
    assert view["why"]["why_review"] == "new" and view["why"]["split"] == "dev"
    assert [(m["case_id"], m["in_version"]) for m in view["cluster"]["members"]] == [
        ("c_1", True), ("c_2", False), ("c_3", True),
    ]  # fmt: skip
    assert view["steps"][0]["arguments"] == '{\n  "order_id": "o1"\n}'
    assert view["outcome"]["final_state"] == "REFUNDED"


def test_a_page_decision_is_the_entry_the_sheet_would_give():
    form = {"decision": "reject", "reason": " wrong outcome ", "corrected_final_state": ""}
    entry = page_entry(form, "c_1", "h1", "ana")
    sheet = check_row({"case_id": "c_1", "exact_hash": "h1", "decision": "reject",
                       "reason": "wrong outcome", "reviewer": "ana"}, 2)  # fmt: skip
    assert entry == sheet
    assert log_lines([entry], "2026-12-04T06:00:00+00:00") == (
        b'{"at":"2026-12-04T06:00:00+00:00","case_id":"c_1","decision":"reject",'
        b'"exact_hash":"h1","expected_actions":null,"expected_final_state":null,'
        b'"reason":"wrong outcome","reviewer":"ana"}\n'
    )
    with pytest.raises(ValueError, match=r"^a rejection needs a reason$"):
        page_entry({"decision": "reject"}, "c_1", None, "ana")
    with pytest.raises(ValueError, match=r"^no decision given$"):
        page_entry({}, "c_1", None, "ana")
    corrected = page_entry(
        {"decision": "correct", "corrected_final_state": "CLOSED"}, "c_1", None, "ana"
    )
    assert corrected["expected_final_state"] == "CLOSED" and corrected["exact_hash"] is None
