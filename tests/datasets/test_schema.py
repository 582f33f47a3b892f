"""The canonical schema: round trips, ids, canonical argument hashing."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.canonical_json import canonical_args_sha256, canonical_json
from golden_distill.datasets.case import Agent, Case, Chunk, Context, Intent, Outcome, Source, Step
from golden_distill.datasets.schema import CASE_SCHEMA, GOLDEN_SCHEMA, make_case_id


def _case() -> Case:
    return Case(
        case_id=make_case_id("native", "r-1"),
        trace_id="t1",
        session_id="s1",
        turn_index=0,
        tenant_id="t-9",
        user_id="u-7",
        recorded_at=datetime(2026, 11, 28, 2, 14, 0, 123000, tzinfo=UTC),
        agent=Agent("2.3.1", "provider/model", '{"temperature":0}', "sha256:ab", "{}"),
        user_input="refund order ORD-1 please",
        intent=Intent("refund", 0.93),
        context=Context("[]", "{}", [Chunk("kb text", "kb@41", "refund")], "{}", "{}"),
        steps=[
            Step(
                seq=0,
                kind="tool",
                name="erp_get_order",
                occurrence=1,
                arguments='{"orderId":"ORD-1"}',
                canonical_args_sha256=canonical_args_sha256({"orderId": "ORD-1"}),
                response='{"status":"PENDING","amount":120.5}',
                is_mutating=False,
                latency_ms=83,
                started_at=datetime(2026, 11, 28, 2, 14, 0, 200000, tzinfo=UTC),
            )
        ],
        outcome=Outcome("done", "APPROVED", "success", False, None, None, 1.0),
        source=Source("native", "file:///x.jsonl", 1, "r-1"),
    )


def test_case_round_trips_through_parquet(tmp_path):
    case = _case()
    table = pa.Table.from_pylist([case.to_row()], schema=CASE_SCHEMA)
    pq.write_table(table, tmp_path / "c.parquet")
    back = pq.read_table(tmp_path / "c.parquet")
    assert back.schema.equals(CASE_SCHEMA, check_metadata=False)
    assert Case.from_row(back.to_pylist()[0]) == case


def test_golden_schema_extends_case_schema_with_pipeline_fields():
    case = _case()
    case.funnels = ["recovery"]
    case.value_score = 2.5
    row = case.to_row(pipeline_fields=True)
    table = pa.Table.from_pylist([row], schema=GOLDEN_SCHEMA)
    assert Case.from_row(table.to_pylist()[0]).funnels == ["recovery"]
    assert set(CASE_SCHEMA.names) < set(GOLDEN_SCHEMA.names)


def test_case_id_is_stable_and_format_scoped():
    assert make_case_id("native", "r-1") == make_case_id("native", "r-1")
    assert make_case_id("native", "r-1") != make_case_id("chat", "r-1")
    assert "r-1" not in make_case_id("native", "r-1")


def test_canonical_args_sorted_compact_and_volatile_free():
    a = {"b": 1, "a": {"z": [1, {"y": 2, "x": 1}], "requestId": "abc"}}
    assert canonical_json(a) == b'{"a":{"z":[1,{"x":1,"y":2}]},"b":1}'
    same = '{"a": {"requestId": "other", "z": [1, {"x": 1, "y": 2}]}, "b": 1}'
    assert canonical_args_sha256(a) == canonical_args_sha256(same)
    assert canonical_args_sha256(a) != canonical_args_sha256({"b": 2, "a": {"z": [1]}})


def test_volatile_keys_are_configurable():
    args = {"id": 1, "ts": 5}
    assert canonical_args_sha256(args) == canonical_args_sha256({"id": 1})
    assert canonical_args_sha256(args, volatile_keys=[]) != canonical_args_sha256({"id": 1}, [])


def test_malformed_argument_text_still_hashes_stably():
    assert canonical_args_sha256("{not json") == canonical_args_sha256("{not json")
