"""The Chronicle reader on envelopes agent-chronicle itself writes: runs recorded through
Chronicle's own boundaries (an in-memory control plane in place of the HTTP one), dumped as
JSONL with ``Envelope.model_dump_json`` and read by `golden ingest` (format recognised), with
bad lines quarantined by line and reason. The export round trip is in
tests/datasets/replay/test_export.py."""

from __future__ import annotations

import contextlib
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.case import Case
from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.sources.chronicle import ChronicleAdapter

chronicle = pytest.importorskip("chronicle")  # the test dependency (agent-chronicle)


class MemoryControlPlane:
    """Chronicle's ``ControlPlaneClient`` protocol, in memory."""

    def __init__(self) -> None:
        self.envelopes: list = []

    def upsert_trace(self, trace) -> None: ...

    def upsert_span(self, span) -> None: ...

    def append_envelopes(self, envelopes) -> None:
        self.envelopes.extend(envelopes)

    def read_span_envelopes(self, trace_id: str, span_id: str) -> list:
        return [e for e in self.envelopes if (e.trace_id, e.span_id) == (trace_id, span_id)]

    def close(self) -> None: ...


@chronicle.boundary("get_order_details")
def get_order_details(order_id: str) -> dict:
    return {"order_id": order_id, "status": "pending", "amount": 120.5}


@chronicle.boundary("cancel_pending_order")
def cancel_pending_order(order_id: str, reason: str) -> dict:
    if reason == "slow":
        raise TimeoutError("order service did not answer")
    if reason == "bad":
        raise ValueError("reason must be 'no longer needed' or 'ordered by mistake'")
    return {"order_id": order_id, "status": "cancelled"}


@chronicle.boundary("chat", kind="llm", provider="openai")
def chat(model: str, messages: list) -> dict:
    return {
        "id": "resp-1",
        "model": model,
        "choices": [
            {
                "message": {"role": "assistant", "content": "Order cancelled."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45},
    }


def _record(tmp_path: Path) -> tuple[Path, list]:
    plane = MemoryControlPlane()
    chronicle.configure(client=plane)
    try:
        with chronicle.record("cancel", labels={"session_id": "s-1"}):
            chat(model="gpt-4o", messages=[{"role": "user", "content": "Cancel order #W1"}])
            get_order_details("#W1")
            for reason in ("slow", "bad", "ordered by mistake"):
                with contextlib.suppress(TimeoutError, ValueError):
                    cancel_pending_order("#W1", reason=reason)
        with chronicle.record("lookup"):
            get_order_details("#W2")
        chronicle.flush()
    finally:
        chronicle.reset()
    lines = [e.model_dump_json().encode() for e in plane.envelopes]
    assert len(lines) == 6
    # runs interleaved, and three lines that are not closed envelopes
    bad = [
        b'{"envelope_id": "e1", "span_id": "s", "trace_id": "t", "name": "x", "kind": "tool",'
        b' "envelope_status": {"state": "open", "started_at": "2026-12-01T00:00:00Z"},'
        b' "input": {"raw": {}}}',
        b'{"envelope_id": "e2", "span_id": "s", "trace_id": "t", "name": "x", "kind": "agent"}',
        b'{"envelope_id": "e3", "span_id": "s", "trac',
    ]
    body = [lines[0], lines[5], lines[1], bad[0], lines[2], bad[1], lines[3], bad[2], lines[4]]
    path = tmp_path / "chronicle.jsonl"
    path.write_bytes(b"\n".join(body) + b"\n")
    return path, plane.envelopes


def test_a_chronicle_recording_reads_into_one_case_per_run(tmp_path) -> None:
    path, envelopes = _record(tmp_path)
    assert ChronicleAdapter.sniff(str(path), path.read_bytes()[:4096])
    summary = ingest([str(path)], tmp_path / "out")
    assert summary.sources[0].format == "chronicle"
    table = pa.concat_tables([pq.read_table(p) for p in summary.shards])
    cases = {c.steps[0].name: c for c in (Case.from_row(r) for r in table.to_pylist())}
    assert set(cases) == {"chat", "get_order_details"}
    run = cases["chat"]
    assert [(s.seq, s.kind, s.name, s.status) for s in run.steps] == [
        (0, "model", "chat", "ok"),
        (1, "tool", "get_order_details", "ok"),
        (2, "tool", "cancel_pending_order", "timeout"),
        (3, "tool", "cancel_pending_order", "error"),
        (4, "tool", "cancel_pending_order", "ok"),
    ]
    assert [s.occurrence for s in run.steps] == [1, 1, 1, 2, 3]
    assert run.steps[0].tokens == 45  # Chronicle's usage buckets, added up
    assert run.steps[2].error == "order service did not answer"
    assert orjson.loads(run.steps[1].arguments) == {"order_id": "#W1"}
    assert orjson.loads(run.steps[1].response)["amount"] == 120.5
    # writes from the tool catalogue, like every source that does not record them
    assert [s.is_mutating for s in run.steps[1:]] == [False, True, True, True]
    assert run.user_input == "Cancel order #W1" and run.outcome.answer_text == "Order cancelled."
    assert run.agent.model_name == "gpt-4o"
    first = envelopes[0]
    assert (run.trace_id, run.source.source_record_id) == (
        first.trace_id,
        f"{first.trace_id}/{first.span_id}",
    )
    started = first.envelope_status.started_at
    assert run.recorded_at == started.replace(microsecond=started.microsecond // 1000 * 1000)
    # bad lines: quarantined by line and reason; the runs around them are whole
    entries = read_quarantine(tmp_path / "out" / "quarantine.jsonl")
    assert [(e["position"], e["reason"]) for e in entries] == [
        (4, "wrong_type"),
        (6, "wrong_type"),
        (8, "invalid_json"),
    ]
    assert "not closed" in entries[0]["detail"] and entries[1]["detail"] == "kind"
    assert summary.records_read == summary.cases_written + 3 == 5


def test_same_input_same_case_ids(tmp_path) -> None:
    path, _ = _record(tmp_path)
    first = pq.read_table(ingest([str(path)], tmp_path / "a").shards[0]).column("case_id")
    again = pq.read_table(ingest([str(path)], tmp_path / "b").shards[0]).column("case_id")
    assert first.to_pylist() == again.to_pylist() and len(set(first.to_pylist())) == 2
