"""Chat transcript adapter: tau-bench runs and JSONL transcripts -> canonical cases."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pytest
from golden_test_data import airline_runs_path

from golden_distill.datasets.quarantine import Quarantine, read_quarantine
from golden_distill.datasets.schema import CASE_SCHEMA, make_case_id
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.registry import ADAPTERS

REPO = Path(__file__).resolve().parents[3]
AIRLINE = airline_runs_path()
FIXTURES = Path(__file__).parent / "fixtures"

# Written out here from the realdata README, not read from the shipped catalogue, so the test
# checks the catalogue rather than repeating it.
AIRLINE_WRITES = {
    "book_reservation",
    "cancel_reservation",
    "update_reservation_flights",
    "update_reservation_baggages",
    "update_reservation_passengers",
    "send_certificate",
}


def read_all(uri: Path | str, tmp_path: Path, config: IngestConfig | None = None):
    quarantine = Quarantine(tmp_path / "quarantine.jsonl")
    stats = ReadStats()
    rows = list(ChatAdapter(config).read(str(uri), quarantine, stats))
    quarantine.close()
    return rows, read_quarantine(tmp_path / "quarantine.jsonl"), stats


@pytest.fixture(scope="module")
def airline_runs() -> list[dict]:
    if not AIRLINE.exists():
        pytest.fail(f"real tau-bench data missing at {AIRLINE}")
    return json.loads(AIRLINE.read_text())


@pytest.fixture(scope="module")
def airline_cases(tmp_path_factory) -> list[dict]:
    rows, entries, _ = read_all(AIRLINE, tmp_path_factory.mktemp("airline"))
    assert entries == []
    return rows


def test_registered_under_chat() -> None:
    assert ADAPTERS["chat"] is ChatAdapter


def test_airline_every_run_becomes_one_valid_case(airline_runs, airline_cases) -> None:
    assert len(airline_cases) == len(airline_runs) == 200
    table = pa.Table.from_pylist(airline_cases, schema=CASE_SCHEMA)
    assert table.num_rows == 200
    assert len({c["case_id"] for c in airline_cases}) == 200


def test_airline_steps_equal_assistant_tool_calls(airline_runs, airline_cases) -> None:
    for run, case in zip(airline_runs, airline_cases, strict=True):
        calls = [
            (tc["function"]["name"], tc["function"]["arguments"])
            for m in run["traj"]
            if m["role"] == "assistant"
            for tc in m.get("tool_calls") or []
        ]
        tool_steps = [(s["name"], s["arguments"]) for s in case["steps"]]
        assert tool_steps == calls
        assert [s["seq"] for s in case["steps"]] == list(range(len(calls)))


def test_airline_error_handoff_and_write_counts(airline_runs, airline_cases) -> None:
    def run_has(run: dict, predicate) -> bool:
        return any(predicate(m) for m in run["traj"])

    def is_error_reply(m):
        return m["role"] == "tool" and str(m["content"]).startswith("Error:")

    def is_handoff(m):
        return any(
            tc["function"]["name"] == "transfer_to_human_agents" for tc in m.get("tool_calls") or []
        )

    def is_write(m):
        return any(tc["function"]["name"] in AIRLINE_WRITES for tc in m.get("tool_calls") or [])

    expected_errors = sum(run_has(r, is_error_reply) for r in airline_runs)
    expected_handoffs = sum(run_has(r, is_handoff) for r in airline_runs)
    expected_writes = sum(run_has(r, is_write) for r in airline_runs)
    assert expected_errors > 0 and expected_handoffs > 0 and expected_writes > 0

    got_errors = sum(any(s["status"] == "error" for s in c["steps"]) for c in airline_cases)
    got_handoffs = sum(bool(c["outcome"]["handoff"]) for c in airline_cases)
    got_handoff_steps = sum(any(s["kind"] == "handoff" for s in c["steps"]) for c in airline_cases)
    got_writes = sum(any(s["is_mutating"] for s in c["steps"]) for c in airline_cases)
    assert (got_errors, got_handoffs, got_handoff_steps, got_writes) == (
        expected_errors,
        expected_handoffs,
        expected_handoffs,
        expected_writes,
    )
    systems = {s["system"] for c in airline_cases for s in c["steps"] if s["is_mutating"]}
    assert systems == {"AIRLINE_RES"}


def test_airline_run_fields(airline_runs, airline_cases) -> None:
    for position, (run, case) in enumerate(zip(airline_runs, airline_cases, strict=True), 1):
        assert case["outcome"]["reward"] == run["reward"]
        assert case["user_id"] == run["info"]["task"]["user_id"]
        first_user = next(m["content"] for m in run["traj"] if m["role"] == "user")
        assert case["user_input"] == first_user
        system = next(m["content"] for m in run["traj"] if m["role"] == "system")
        digest = hashlib.sha256(system.encode()).hexdigest()
        assert case["agent"]["system_prompt_version"] == f"sha256:{digest}"
        assert case["source"]["position"] == position
        assert case["case_id"] == make_case_id("chat", f"{AIRLINE.name}:{position}")
        assert all(s["canonical_args_sha256"] for s in case["steps"])


def test_jsonl_broken_records_quarantined_rest_read(tmp_path) -> None:
    rows, entries, stats = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path)
    reasons = {e["position"]: e["reason"] for e in entries}
    assert reasons == {
        3: "orphan_tool_reply",
        4: "malformed_arguments",
        5: "invalid_json",
        6: "not_an_object",
        7: "missing_field",
    }
    assert [r["source"]["position"] for r in rows] == [1, 2, 8]
    assert stats.records_read == 8 and stats.cases == 3
    for entry in entries:  # details name fields, never record text
        assert "python repr" not in entry["detail"] and "orphan" not in entry["detail"]


def test_jsonl_transcript_fields(tmp_path) -> None:
    rows, _, _ = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path)
    first, handoff, flagged = rows
    assert (first["trace_id"], first["session_id"], first["tenant_id"]) == ("conv-1", "s-1", "t-1")
    assert first["agent"]["model_name"] == "gpt-x"
    assert first["outcome"]["reward"] == 1.0
    assert first["outcome"]["answer_text"] == "Your order is cancelled."
    assert [(s["name"], s["status"], s["occurrence"]) for s in first["steps"]] == [
        ("get_order_details", "ok", 1),
        ("cancel_pending_order", "error", 1),
        ("cancel_pending_order", "ok", 2),
    ]
    # the same arguments given as an object and as a JSON string hash the same
    assert first["steps"][1]["canonical_args_sha256"] == first["steps"][2]["canonical_args_sha256"]
    assert json.loads(first["steps"][1]["arguments"]) == {
        "order_id": "#W7",
        "reason": "no longer needed",
    }
    assert first["steps"][1]["is_mutating"] is True
    assert first["steps"][0]["is_mutating"] is False
    assert json.loads(first["context"]["messages"])[0]["role"] == "user"

    assert handoff["steps"][0]["kind"] == "handoff"
    assert handoff["outcome"]["handoff"] is True
    assert handoff["outcome"]["handoff_reason"] == "wants a human"
    assert handoff["steps"][0]["status"] == "ok"  # error: false is not an error

    assert flagged["user_input"] == "parts"
    assert flagged["steps"][0]["status"] == "error"
    assert flagged["steps"][0]["error"] == "payment_declined"


def test_error_patterns_and_handoff_tools_are_configurable(tmp_path) -> None:
    config = IngestConfig(tool_error_patterns=[r"not pending"], handoff_tools=["get_order_details"])
    rows, _, _ = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path, config)
    first = rows[0]
    assert [s["status"] for s in first["steps"]] == ["ok", "error", "ok"]
    assert first["steps"][0]["kind"] == "handoff"
    assert rows[1]["steps"][0]["kind"] == "tool"  # transfer_to_human_agents no longer listed
    config = IngestConfig(tool_error_patterns=[])
    rows, _, _ = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path / "b", config)
    assert [s["status"] for s in rows[0]["steps"]] == ["ok", "ok", "ok"]


def test_malformed_arguments_can_be_kept(tmp_path) -> None:
    config = IngestConfig(malformed_arguments="keep_as_string")
    rows, entries, stats = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path, config)
    assert 4 in [r["source"]["position"] for r in rows]
    assert "malformed_arguments" not in {e["reason"] for e in entries}
    assert stats.extra["malformed_arguments_kept"] == 1
    kept = next(r for r in rows if r["source"]["position"] == 4)
    assert json.loads(kept["steps"][0]["arguments"]) == "{'thought': 'python repr'}"


def test_array_broken_elements_quarantined(tmp_path) -> None:
    rows, entries, stats = read_all(FIXTURES / "chat_broken_array.json", tmp_path)
    assert [r["source"]["source_record_id"] for r in rows] == ["task=1/trial=0", "task=3/trial=0"]
    assert {(e["position"], e["reason"]) for e in entries} == {
        (2, "orphan_tool_reply"),
        (3, "not_an_object"),
        (5, "truncated_stream"),
    }
    assert stats.records_read == 5
    assert rows[1]["steps"] == [] and rows[1]["user_input"] == "y"


def test_ids_are_stable_across_reads(tmp_path) -> None:
    first, _, _ = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path / "a")
    second, _, _ = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path / "b")
    assert [r["case_id"] for r in first] == [r["case_id"] for r in second]
    assert first == second


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'[\n  {"task_id": 0, "reward": 0.0, "traj": []}', True),
        (b'{"messages": [{"role": "user", "content": "x"}]}\n', True),
        (b'{"recordId": "r1", "context": {"messages": []}, "toolCalls": []}\n', False),
        (b'{"resourceSpans": []}', False),
        (b"trace_id,session_id\n", False),
    ],
)
def test_sniff(head: bytes, expected: bool) -> None:
    assert ChatAdapter.sniff("x", head) is expected


def test_jsonl_compressed_oversized_and_truncated(tmp_path) -> None:
    import gzip

    lines = (FIXTURES / "chat_mixed.jsonl").read_bytes().splitlines(keepends=True)
    good = lines[0] + lines[1]
    packed = gzip.compress(good + lines[7])
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) - 12])  # cut inside the stream's last block
    rows, entries, _ = read_all(path, tmp_path)
    assert [r["source"]["position"] for r in rows] == [1, 2]  # lines before the break kept
    assert "truncated_stream" in {e["reason"] for e in entries}

    config = IngestConfig(max_line_bytes=len(lines[1]) + 1)
    rows, entries, _ = read_all(FIXTURES / "chat_mixed.jsonl", tmp_path / "b", config)
    oversized = {e["position"] for e in entries if e["reason"] == "oversized_line"}
    assert 1 in oversized and 2 not in oversized
    assert 2 in [r["source"]["position"] for r in rows]


def test_stopping_early_releases_the_mapped_file(tmp_path) -> None:
    rows = ChatAdapter().read(str(AIRLINE), Quarantine(), ReadStats())
    assert next(rows)["source"]["position"] == 1
    rows.close()  # the memory map of the array is closed without error
    copy = tmp_path / "airline.json"
    copy.write_bytes(AIRLINE.read_bytes())
    first = next(ChatAdapter().read(str(copy), Quarantine(), ReadStats()))
    assert first["trace_id"] == "task=0/trial=0"
