"""Per-case signatures: exact hash, block key, and purity (a case's signature is its own)."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.normalise import step_token
from golden_distill.filters.dedup.signature import SIGNATURE_SCHEMA, signatures


def _refund(dsl, case_id, order, amount, name, *, status="ok", text=None):
    return dsl.case(
        case_id,
        text or f"Hi, I'm {name}. Please refund order {order}, {amount} EUR.",
        [
            dsl.read("erp_get_order", {"orderId": order}, status),
            dsl.write("fin_issue_refund", {"orderId": order, "amount": amount}),
        ],
    )


def test_runs_differing_only_in_ids_amounts_and_names_share_the_exact_hash(dsl):
    sig = signatures(
        dsl.frame(
            [
                _refund(dsl, "c1", "ORD-100", 12.5, "Aaron Smith"),
                _refund(dsl, "c2", "ORD-777", 9000, "Maria Garcia"),
            ]
        )
    )
    assert sig.get_column("exact_hash").n_unique() == 1
    assert sig.get_column("block_key").n_unique() == 1


def test_a_status_change_changes_the_hash_and_path_but_not_the_block(dsl):
    sig = signatures(
        dsl.frame(
            [
                _refund(dsl, "c1", "ORD-1", 1, "Ann"),
                _refund(dsl, "c2", "ORD-1", 1, "Ann", status="timeout"),
            ]
        )
    )
    assert sig.get_column("exact_hash").n_unique() == 2
    assert sig.get_column("path_key").n_unique() == 2
    assert sig.get_column("block_key").n_unique() == 1


def test_a_different_write_call_is_a_different_block(dsl):
    text = "Please fix order ORD-1"
    a = dsl.case("a", text, [dsl.write("erp_cancel_order", {"orderId": "ORD-1"})])
    b = dsl.case("b", text, [dsl.write("erp_update_order", {"orderId": "ORD-1"})])
    sig = signatures(dsl.frame([a, b]))
    assert sig.get_column("text").n_unique() == 1
    assert sig.get_column("block_key").n_unique() == 2


def test_read_tool_set_is_part_of_the_block_only_when_configured(dsl):
    w = dsl.write("erp_cancel_order", {"orderId": "ORD-1"})
    a = dsl.case("a", "x", [dsl.read("erp_get_order", {"orderId": "1"}), w])
    b = dsl.case("b", "x", [dsl.read("crm_get_customer", {"customerId": "1"}), w])
    frame = dsl.frame([a, b])
    assert signatures(frame).get_column("block_key").n_unique() == 2
    loose = DedupConfig(block_on_read_tools=False)
    assert signatures(frame, loose).get_column("block_key").n_unique() == 1


def test_trajectory_tokens_match_step_token(dsl):
    case = _refund(dsl, "c1", "ORD-1", 1, "Ann", status="error")
    sig = signatures(dsl.frame([case]))
    expected = " ".join(step_token(s.name, s.status, s.is_mutating) for s in case.steps)
    assert sig.item(0, "trajectory") == expected
    assert sig.item(0, "distinct_tools") == 2
    assert sig.item(0, "n_steps") == 2


def test_model_steps_are_not_part_of_the_tool_path(dsl):
    with_model = _refund(dsl, "c1", "ORD-1", 1, "Ann")
    with_model.steps[0].kind = "model"
    plain = _refund(dsl, "c2", "ORD-1", 1, "Ann")
    sig = signatures(dsl.frame([with_model, plain]))
    assert sig.item(0, "n_steps") == 1
    assert sig.item(1, "n_steps") == 2


def test_signature_of_a_case_does_not_depend_on_its_neighbours(dsl):
    cases = [_refund(dsl, f"c{i}", f"ORD-{i}", i, "Ann", status="ok") for i in range(5)]
    cases.append(dsl.case("empty", None, []))
    together = signatures(dsl.frame(cases))
    alone = pl.concat([signatures(dsl.frame([c])) for c in cases])
    assert together.equals(alone)
    assert together.schema == pl.Schema(SIGNATURE_SCHEMA)


def test_case_without_steps_or_text_gets_a_signature(dsl):
    sig = signatures(dsl.frame([dsl.case("c0", None, [], value_score=None)]))
    assert sig.item(0, "trajectory") == ""
    assert sig.item(0, "text") == ""
    assert sig.item(0, "n_steps") == 0
    assert sig.item(0, "value_score") is None


def test_empty_frame_gives_empty_signatures(dsl):
    empty = dsl.frame([]).head(0)
    assert signatures(empty).height == 0
