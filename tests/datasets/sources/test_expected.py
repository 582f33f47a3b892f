"""The `expected` field from each source: native expectedFinalState, tau-bench task actions and
outputs, evidence tables' columns; older (1.0) sets read it as null."""

from __future__ import annotations

import json

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from golden_test_data import airline_runs_path

from golden_distill.datasets.case import Case
from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import CASE_SCHEMA, GOLDEN_SCHEMA, conform_table
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.evidence import EvidenceAdapter
from golden_distill.datasets.sources.evidence_writer import export_evidence
from golden_distill.datasets.sources.native import NativeAdapter
from golden_distill.datasets.sources.tool_catalogue import load_tool_catalogue


def _read(adapter, uri: str) -> list[dict]:
    return list(adapter.read(uri, Quarantine(), ReadStats()))


def test_native_expected_final_state(tmp_path):
    lines = []
    for i, state in enumerate(["REFUND_DONE", None]):
        rec = {
            "recordId": f"r{i}",
            "sessionId": "s",
            "recordedAt": "2026-11-28T02:14:00Z",
            "initialUserInput": "hi",
            "toolCalls": [{"toolName": "erp_get_order", "arguments": {"orderId": "O-1"}}],
        }
        if state:
            rec["expectedFinalState"] = state
        lines.append(json.dumps(rec))
    path = tmp_path / "n.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rows = _read(NativeAdapter(), str(path))
    first, second = (Case.from_row(r) for r in rows)
    assert first.expected.final_state == "REFUND_DONE"
    assert first.expected.source == "native" and first.expected.actions == []
    assert second.expected is None


def test_tau_bench_task_actions_are_expected_writes(tmp_path):
    runs = json.loads(airline_runs_path().read_text())[:40]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    rows = _read(ChatAdapter(IngestConfig()), str(path))
    assert len(rows) == len(runs)
    catalogue = load_tool_catalogue(IngestConfig().tool_catalogues)
    reads = {n for n, info in catalogue.tools.items() if info.is_mutating is False}
    assert "get_reservation_details" in reads and "book_reservation" not in reads
    for run, row in zip(runs, rows, strict=True):
        expected = row["expected"]
        assert expected["source"] == "tau_bench_task"
        wanted = [a for a in run["info"]["task"]["actions"] if a["name"] not in reads]
        assert [a["name"] for a in expected["actions"]] == [a["name"] for a in wanted]
        for action, given in zip(expected["actions"], wanted, strict=True):
            assert orjson.loads(action["arguments"]) == given["kwargs"]
            assert (
                action["arguments"]
                == orjson.dumps(given["kwargs"], option=orjson.OPT_SORT_KEYS).decode()
            )
        assert expected["answer_facts"] == [str(o) for o in run["info"]["task"]["outputs"]]
    table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
    assert table.column("expected").null_count == 0


def test_evidence_round_trip_keeps_expected(tmp_path):
    runs = json.loads(airline_runs_path().read_text())[:10]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    rows = _read(ChatAdapter(IngestConfig()), str(path))
    db = f"sqlite:///{tmp_path / 'ev.db'}"
    export_evidence(rows, db)
    back = {r["case_id"]: r for r in _read(EvidenceAdapter(IngestConfig()), db)}
    for row in rows:
        assert back[row["case_id"]]["expected"] == row["expected"]


def test_a_1_0_file_reads_expected_as_null(tmp_path):
    old = pa.schema([f for f in GOLDEN_SCHEMA if f.name != "expected"])
    table = pa.Table.from_pylist([{"case_id": "c_1", "steps": [], "funnels": ["x"]}], schema=old)
    pq.write_table(table, tmp_path / "old.parquet")
    read = conform_table(pq.read_table(tmp_path / "old.parquet"), GOLDEN_SCHEMA)
    assert read.schema.names == GOLDEN_SCHEMA.names
    assert read.to_pylist()[0]["expected"] is None
    assert Case.from_row(read.to_pylist()[0]).expected is None
