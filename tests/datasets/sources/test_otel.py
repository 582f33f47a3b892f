"""OpenTelemetry GenAI adapter: OTLP JSON exports -> one case per trace."""

from __future__ import annotations

import hashlib
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from golden_test_data import airline_runs_path

from golden_distill.datasets.quarantine import Quarantine, read_quarantine
from golden_distill.datasets.schema import CASE_SCHEMA, make_case_id
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.otel import OtelAdapter
from golden_distill.datasets.sources.otel_spans import any_value
from golden_distill.datasets.sources.otel_writer import trace_hex, write_otlp_jsonl
from golden_distill.datasets.sources.registry import ADAPTERS

FIXTURES = Path(__file__).parent / "fixtures"
AIRLINE = airline_runs_path()
TRACE_A = "0af7651916cd43dd8448eb211c80319c"
TRACE_B = "5b8efff798038103d269b633813fc60c"


def read_all(path: Path, tmp_path: Path, config: IngestConfig | None = None):
    qpath = tmp_path / "quarantine.jsonl"
    quarantine = Quarantine(qpath)
    stats = ReadStats()
    rows = list(OtelAdapter(config).read(str(path), quarantine, stats))
    quarantine.close()
    return rows, read_quarantine(qpath), stats


@pytest.fixture
def fixture_cases(tmp_path):
    return read_all(FIXTURES / "otel_genai.json", tmp_path)


def test_registered_under_otel() -> None:
    assert ADAPTERS["otel"] is OtelAdapter


def test_broken_spans_quarantined_rest_read(fixture_cases) -> None:
    rows, entries, stats = fixture_cases
    assert [r["trace_id"] for r in rows] == [TRACE_A, TRACE_B]
    assert sorted(e["reason"] for e in entries) == [
        "malformed_arguments",  # the trace whose think call has Python-repr arguments
        "no_trace_id",
        "wrong_type",  # a span that is a string
    ]
    no_trace = next(e for e in entries if e["reason"] == "no_trace_id")
    assert no_trace["detail"] == "resourceSpans[0].scopeSpans[0].spans[3] has no traceId"
    malformed = next(e for e in entries if e["reason"] == "malformed_arguments")
    assert "7c9e6679742541" in malformed["detail"] and "python repr" not in malformed["detail"]
    assert all("raw" in e for e in entries)
    assert stats.extra["spans"] == 10
    assert stats.cases == 2
    pa.Table.from_pylist(rows, schema=CASE_SCHEMA)


def test_run_span_and_steps(fixture_cases) -> None:
    case = fixture_cases[0][0]
    assert case["case_id"] == make_case_id("otel", TRACE_A)
    assert case["session_id"] == "conv-42"
    assert (case["tenant_id"], case["user_id"]) == ("t-9", "u-7")
    assert case["recorded_at"] == datetime(2025, 11, 28, 2, 14, tzinfo=UTC)
    assert case["user_input"] == "Refund order 7"
    assert case["outcome"]["answer_text"] == "Refunded."
    assert case["outcome"]["status"] == "success"
    agent = case["agent"]
    assert agent["model_name"] == "gpt-4o"
    assert agent["agent_version"] == "4.1.0"  # resource service.version
    assert json.loads(agent["model_params"]) == {"temperature": 0.2, "max_tokens": 512}
    digest = hashlib.sha256(b"You are a support agent.").hexdigest()
    assert agent["system_prompt_version"] == f"sha256:{digest}"
    steps = case["steps"]
    # ordered by start time, not by file order; the run span is not a step
    assert [(s["kind"], s["name"], s["status"]) for s in steps] == [
        ("model", "gpt-4o", "ok"),
        ("tool", "erp_get_order", "ok"),
        ("tool", "erp_refund_order", "timeout"),
        ("tool", "erp_refund_order", "ok"),
    ]
    assert steps[0]["tokens"] == 120 and steps[0]["latency_ms"] == 1000
    assert json.loads(steps[1]["arguments"]) == {"orderId": "ORD-7"}  # kvlist arguments
    assert json.loads(steps[1]["response"]) == {"status": "PENDING"}
    assert steps[2]["error"] == "timeout" and steps[2]["response"] is None
    assert steps[2]["canonical_args_sha256"] == steps[3]["canonical_args_sha256"]
    assert [s["occurrence"] for s in steps] == [1, 1, 1, 2]
    assert {s["system"] for s in steps[1:]} == {"ERP"}


def test_trace_without_run_span_is_a_case(fixture_cases) -> None:
    case = fixture_cases[0][1]
    assert case["session_id"] == "conv-43"
    assert case["user_input"] is None and case["agent"]["model_name"] is None
    assert [s["name"] for s in case["steps"]] == ["crm_lookup", "transfer_to_human_agents"]
    assert case["steps"][1]["kind"] == "handoff"
    assert case["outcome"]["handoff"] is True
    assert case["steps"][0]["latency_ms"] is None  # no end time: fine
    assert case["outcome"]["status"] is None


def test_jsonl_export_groups_trace_across_lines(tmp_path) -> None:
    rows, entries, _ = read_all(FIXTURES / "otel_lines.jsonl", tmp_path)
    assert sorted((e["position"], e["reason"]) for e in entries) == [
        (3, "invalid_json"),
        (4, "not_an_object"),
    ]
    first, second = rows
    assert first["session_id"] == "s-1"
    assert [s["name"] for s in first["steps"]] == ["book_reservation"]
    assert first["steps"][0]["is_mutating"] is True
    assert first["steps"][0]["system"] == "AIRLINE_RES"
    assert second["steps"][0]["kind"] == "model"


def test_malformed_arguments_can_be_kept(tmp_path) -> None:
    config = IngestConfig(malformed_arguments="keep_as_string")
    rows, entries, _ = read_all(FIXTURES / "otel_genai.json", tmp_path, config)
    assert len(rows) == 3
    assert "malformed_arguments" not in {e["reason"] for e in entries}


def test_airline_cases_survive_an_otlp_export(tmp_path) -> None:
    cases = list(ChatAdapter().read(str(AIRLINE), Quarantine(), ReadStats()))
    path = tmp_path / "airline.otlp.jsonl"
    assert write_otlp_jsonl(cases, path, traces_per_line=9) == 200
    rows, entries, _ = read_all(path, tmp_path)
    assert entries == [] and len(rows) == 200
    for case, back in zip(cases, rows, strict=True):
        assert back["trace_id"] == trace_hex(case)
        fields = ("name", "arguments", "response", "status", "kind", "is_mutating", "system")
        assert [tuple(s[f] for f in fields) for s in back["steps"]] == [
            tuple(s[f] for f in fields) for s in case["steps"]
        ]
        assert back["user_input"] == case["user_input"]
        assert back["outcome"]["answer_text"] == case["outcome"]["answer_text"]
        assert back["outcome"]["handoff"] == case["outcome"]["handoff"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"stringValue": "x"}, "x"),
        ({"intValue": "12"}, 12),
        ({"doubleValue": 0.5}, 0.5),
        ({"boolValue": True}, True),
        ({"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "a"}]}}, [1, "a"]),
        ({}, None),
    ],
)
def test_any_value(value, expected) -> None:
    assert any_value(value) == expected


def test_sniff() -> None:
    assert OtelAdapter.sniff("x.json", b'{\n  "resourceSpans": [')
    assert not OtelAdapter.sniff("x.jsonl", b'{"messages": []}')
    assert not OtelAdapter.sniff("x.json", b'[{"traj": []}]')


def test_spilling_to_disk_gives_the_same_cases(tmp_path) -> None:
    cases = list(ChatAdapter().read(str(AIRLINE), Quarantine(), ReadStats()))
    path = tmp_path / "airline.otlp.jsonl"
    write_otlp_jsonl(cases, path, traces_per_line=50)
    in_memory, _, _ = read_all(path, tmp_path / "a")
    spilled, entries, stats = read_all(
        path, tmp_path / "b", IngestConfig(otel_max_spans_in_memory=100)
    )
    assert entries == [] and stats.extra["otel_spilled_files"] == 1
    assert len(spilled) == 200

    def key(row):
        return row["trace_id"]

    def without_position(row):
        return {**row, "source": {**row["source"], "position": None}}

    assert [without_position(r) for r in sorted(spilled, key=key)] == [
        without_position(r) for r in sorted(in_memory, key=key)
    ]
    again, _, _ = read_all(path, tmp_path / "c", IngestConfig(otel_max_spans_in_memory=100))
    assert [r["trace_id"] for r in again] == [r["trace_id"] for r in spilled]  # deterministic
    assert not list(Path(tempfile.gettempdir()).glob("golden-otel-*"))  # spill files removed
