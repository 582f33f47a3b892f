"""The outcome is judged on the state the writes leave: the write sandbox applies each replayed
write to the case's baseline state, and P0's final state compares it with the state the
recorded writes leave, entity by entity; the agent's label only counts when no state can be
derived, and the row says which was used."""

from __future__ import annotations

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.case import Case, Context, Expected, Outcome, Step
from golden_distill.datasets.replay import AgentResult, replay_case
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.replay.sandbox import apply_writes, baseline_state


def _step(seq: int, name: str, args: str, response: str, write: bool) -> Step:
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


READ = _step(0, "erp_get_order", '{"orderId":"O-1"}', '{"orderId":"O-1","status":"PENDING"}', False)
SHIP = _step(
    1,
    "erp_update_order",
    '{"orderId":"O-1","status":"SHIPPED"}',
    '{"orderId":"O-1","status":"SHIPPED"}',
    True,
)
CREDIT = _step(
    2,
    "crm_apply_credit",
    '{"customerId":"C-7","amount":50}',
    '{"customerId":"C-7","creditId":"CR-1"}',
    True,
)
BASELINE = '{"order:O-1": "PENDING", "customer:C-7": {"tier": "gold"}}'


def _case(steps, baseline=BASELINE, label="ORDER_SHIPPED", expected=None) -> Case:
    return Case(
        case_id="c_state",
        steps=list(steps),
        context=Context(baseline_state=baseline),
        outcome=Outcome(final_state=label),
        expected=expected,
    )


def _calls(*calls):
    def agent(case, tools):
        for name, args in calls:
            tools.call(name, args)
        return AgentResult(final_state="whatever the agent calls it")

    return agent


def test_the_state_the_writes_leave() -> None:
    state = apply_writes(
        baseline_state(BASELINE),
        [
            ("erp_update_order", {"orderId": "O-1", "status": "SHIPPED"}, None),
            (
                "crm_apply_credit",
                {"customerId": "C-7", "amount": 50},
                {"customerId": "C-7", "creditId": "CR-1"},
            ),
        ],
        frozenset(),
    )
    # the order changes in place; the credit the write created is an entity of its own
    assert state == {
        "order:O-1": {"status": "SHIPPED"},
        "customer:C-7": {"tier": "gold"},
        "credit:CR-1": {"amount": 50},
    }


def test_a_changed_write_is_judged_on_the_state_entity_by_entity() -> None:
    case = _case([READ, SHIP, CREDIT])
    run = replay_case(
        _calls(
            ("erp_get_order", {"orderId": "O-1"}),
            ("erp_update_order", {"orderId": "O-1", "status": "CANCELLED"}),
            ("crm_apply_credit", {"customerId": "C-7", "amount": 50}),
        ),
        case,
    )
    (row,) = [d for d in run.check.diffs if d.diff_type == "final_state_diff"]
    assert row.detail == (
        "final state differs from the recorded writes' state in 1 place(s) "
        '(judged on the state): order:O-1.status: recorded "SHIPPED", '
        'replayed "CANCELLED"'
    )
    assert row.extra["basis"] == "state" and run.check.final_state_basis == "state"
    assert row.position == "entities order:O-1"  # where: the entity that differs
    assert not run.check.final_state_ok


def test_a_dropped_write_leaves_the_baseline() -> None:
    run = replay_case(
        _calls(
            ("erp_get_order", {"orderId": "O-1"}),
            ("crm_apply_credit", {"customerId": "C-7", "amount": 50}),
        ),
        _case([READ, SHIP, CREDIT]),
    )
    (row,) = [d for d in run.check.diffs if d.diff_type == "final_state_diff"]
    assert 'order:O-1.status: recorded "SHIPPED", replayed "PENDING"' in row.detail


def test_writes_to_different_entities_in_another_order_leave_the_same_state() -> None:
    run = replay_case(
        _calls(
            ("erp_get_order", {"orderId": "O-1"}),
            ("crm_apply_credit", {"customerId": "C-7", "amount": 50}),
            ("erp_update_order", {"orderId": "O-1", "status": "SHIPPED"}),
        ),
        _case([READ, SHIP, CREDIT]),
    )
    assert [d.diff_type for d in run.check.diffs] == ["tool_seq_diff"]  # the order, not the state
    assert run.check.final_state_ok


def test_the_label_is_ignored_when_a_state_is_derived_and_compared_when_not() -> None:
    run = replay_case(
        _calls(
            ("erp_get_order", {"orderId": "O-1"}),
            ("erp_update_order", {"orderId": "O-1", "status": "SHIPPED"}),
        ),
        _case([READ, SHIP]),
    )
    assert run.check.diffs == [] and run.check.final_state_basis == "state"
    # a read-only case with no baseline: only the label can say how it ended
    reads = _case([READ], baseline=None, label="ORDER_SHOWN")
    for label, ok in (("order_shown", True), (" Order_Shown ", True), ("ORDER_LOST", False)):

        def agent(case, tools, label=label):
            reissue(case, tools)
            return AgentResult(final_state=label)

        run = replay_case(agent, reads)
        assert run.check.final_state_ok is ok and run.check.final_state_basis == "label"
        if not ok:
            (row,) = run.check.diffs
            assert "no state could be derived: judged on the agent's label" in row.detail
    # an agent that reports no label is not judged on one
    run = replay_case(lambda case, tools: AgentResult(), reads)
    assert "final_state_diff" not in {d.diff_type for d in run.check.diffs}
    assert not run.check.final_state_checked


def test_an_expected_state_is_held_to() -> None:
    expected = Expected(final_state='{"order:O-1": {"status": "SHIPPED"}}', source="native")
    case = _case([READ, SHIP], expected=expected)
    assert replay_case(reissue, case).check.diffs == []
    run = replay_case(
        _calls(
            ("erp_get_order", {"orderId": "O-1"}),
            ("erp_update_order", {"orderId": "O-1", "status": "HELD"}),
        ),
        case,
    )
    details = [d.detail for d in run.check.diffs if d.diff_type == "final_state_diff"]
    assert any(
        d.startswith("final state misses the expected state")
        and "order:O-1.status: expected 'SHIPPED', replayed 'HELD'" in d
        for d in details
    )


def test_a_later_read_sees_what_the_replay_wrote() -> None:
    seen = {}

    def agent(case, tools):
        tools.call("erp_update_order", {"orderId": "O-1", "status": "CANCELLED"})
        seen["order"] = tools.call("erp_get_order", {"orderId": "O-1"})
        return AgentResult()

    replay_case(
        agent,
        _case(
            [
                SHIP,
                _step(
                    2,
                    "erp_get_order",
                    '{"orderId":"O-1"}',
                    '{"orderId":"O-1","status":"SHIPPED"}',
                    False,
                ),
            ]
        ),
    )
    assert seen["order"]["status"] == "CANCELLED"


def test_a_reviewers_corrected_label_is_compared_even_with_a_state() -> None:
    """The reviewer says the recording did not end as it should: the state its writes leave
    cannot tell, the agent's label is held to the corrected one."""
    corrected = Expected(final_state="ORDER_HELD_FOR_REVIEW", source="review")
    case = _case([READ, SHIP], expected=corrected)
    run = replay_case(reissue, case)  # ends as recorded: ORDER_SHIPPED
    (row,) = run.check.diffs
    assert row.diff_type == "final_state_diff" and row.extra["basis"] == "label"
    assert (row.recorded, row.replayed) == ("ORDER_HELD_FOR_REVIEW", "ORDER_SHIPPED")

    def fixed(case, tools):
        reissue(case, tools)
        return AgentResult(final_state="order_held_for_review")

    assert replay_case(fixed, case).check.diffs == []


SHIPPED_READ = _step(
    3, "erp_get_order", '{"orderId":"O-1"}', '{"orderId":"O-1","status":"SHIPPED"}', False
)


def _reads_after(*writes):
    """An agent that reads the order, makes ``writes``, reads it again (what it saw is kept)."""
    seen: list[dict] = []

    def agent(case, tools):
        seen.append(tools.call("erp_get_order", {"orderId": "O-1"}))
        for args in writes:
            tools.call("erp_update_order", args)
        seen.append(tools.call("erp_get_order", {"orderId": "O-1"}))
        return AgentResult()

    return agent, seen


def test_a_read_after_a_skipped_write_sees_the_baseline() -> None:
    agent, seen = _reads_after()  # the SHIPPED write skipped
    run = replay_case(agent, _case([READ, SHIP, SHIPPED_READ]))
    assert [s["status"] for s in seen] == ["PENDING", "PENDING"]  # not the recorded SHIPPED
    (row,) = [d for d in run.check.diffs if d.diff_type == "final_state_diff"]
    assert row.position == "entities order:O-1"
    assert 'order:O-1.status: recorded "SHIPPED", replayed "PENDING"' in row.detail
    # a faithful replay reads what was recorded
    agent, seen = _reads_after({"orderId": "O-1", "status": "SHIPPED"})
    assert replay_case(agent, _case([READ, SHIP, SHIPPED_READ])).check.diffs == []
    assert [s["status"] for s in seen] == ["PENDING", "SHIPPED"]


def test_a_read_after_a_changed_write_sees_the_sandbox_not_the_recording() -> None:
    # the write changes another field: the status the recorded write set is not there
    agent, seen = _reads_after({"orderId": "O-1", "priority": "high"})
    run = replay_case(agent, _case([READ, SHIP, SHIPPED_READ]))
    assert seen[1] == {"orderId": "O-1", "status": "PENDING", "priority": "high"}
    (row,) = [d for d in run.check.diffs if d.diff_type == "final_state_diff"]
    assert row.position == "entities order:O-1"
    # a field only the recorded write gave is not shown once that write is dropped
    noted = _step(1, "erp_update_order", SHIP.arguments,
                  '{"orderId":"O-1","status":"SHIPPED","carrier":"DHL"}', True)  # fmt: skip
    read = _step(3, "erp_get_order", '{"orderId":"O-1"}',
                 '{"orderId":"O-1","status":"SHIPPED","carrier":"DHL"}', False)  # fmt: skip
    agent, seen = _reads_after()
    replay_case(agent, _case([READ, noted, read]))
    assert seen[1] == {"orderId": "O-1", "status": "PENDING"}


def test_a_listing_read_after_a_skipped_write_shows_the_baseline_for_that_entity() -> None:
    listing = '[{"orderId":"O-1","status":"SHIPPED"},{"orderId":"O-2","status":"SHIPPED"}]'
    seen = {}

    def agent(case, tools):  # skips the write, then lists the orders
        seen["orders"] = tools.call("erp_list_orders", {"orderIds": ["O-1", "O-2"]})
        return AgentResult()

    later = _step(3, "erp_list_orders", '{"orderIds":["O-1","O-2"]}', listing, False)
    replay_case(agent, _case([SHIP, later]))
    assert seen["orders"] == [
        {"orderId": "O-1", "status": "PENDING"},  # the sandbox's
        {"orderId": "O-2", "status": "SHIPPED"},  # as recorded: no write of it was skipped
    ]
