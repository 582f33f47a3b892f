"""The native JSONL reader: field mapping, compression, one quarantine reason per broken kind."""

from __future__ import annotations

import gzip
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.case import Case
from golden_distill.datasets.quarantine import Quarantine, read_quarantine
from golden_distill.datasets.schema import CASE_SCHEMA, make_case_id
from golden_distill.datasets.sources.base import ReadStats, SourceError
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.native import NativeAdapter
from golden_distill.datasets.sources.native_record import NativeConverter
from golden_distill.datasets.sources.registry import ADAPTERS

SECRET = "Zebulon-Quarantine-Secret-4471"  # must never reach a detail or a summary


def recording(record_id: str = "r-1", **overrides: Any) -> dict[str, Any]:
    """A complete native recording, in the DESIGN.md shape."""
    base: dict[str, Any] = {
        "recordId": record_id,
        "tenantId": "t-9",
        "sessionId": "s-4",
        "turnIndex": 2,
        "userId": "u-7",
        "recordedAt": "2026-11-28T02:14:00.123Z",
        "agentVersion": "2.3.1",
        "modelIdentifier": "provider/model-2026-10",
        "modelParams": {"temperature": 0},
        "systemPromptVersion": "sha256:ab12",
        "promptVariables": {"shop": "north"},
        "initialUserInput": f"refund order ORD-1 for {SECRET}",
        "intent": {"name": "refund", "confidence": 0.93},
        "context": {
            "messages": [{"role": "user", "content": "hi"}],
            "memory": {"k": 1},
            "retrievedChunks": [{"text": "policy", "indexSnapshotId": "kb@41", "query": "q"}],
            "envVersions": {"erp_api": "v7"},
            "baselineState": {"order:ORD-1": "PENDING"},
        },
        "toolCalls": [
            {
                "stepIndex": 0,
                "parentStep": None,
                "kind": "tool",
                "toolName": "erp_get_order",
                "arguments": {"orderId": "ORD-1", "requestId": "req-77"},
                "response": {"status": "PENDING", "amount": 120.5},
                "status": "error",
                "error": {"code": 503},
                "isMutating": False,
                "latencyMs": 83,
                "timestampMs": 1764296040123,
            },
            {"toolName": "erp_get_order", "arguments": {"orderId": "ORD-1"}, "tokens": 12},
            {"toolName": "refund_tool", "system": "PAYMENTS", "isMutating": True},
        ],
        "handoff": {"requested": True, "reason": "angry"},
        "finalOutputText": "done",
        "expectedFinalState": "APPROVED_AND_NOTIFIED",
        "finalStatus": "success",
        "lowConfidence": False,
        "reward": 1,
    }
    base.update(overrides)
    return base


def line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def write(path: Path, data: bytes) -> Path:
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    elif path.name.endswith(".zst"):
        path.write_bytes(zstandard.ZstdCompressor().compress(data))
    else:
        path.write_bytes(data)
    return path


def read_all(
    path: Path | str, config: IngestConfig | None = None, quarantine_path: Path | None = None
) -> tuple[list[dict[str, Any]], Quarantine, ReadStats]:
    quarantine = Quarantine(quarantine_path)
    stats = ReadStats()
    rows = list(NativeAdapter(config).read(str(path), quarantine, stats))
    quarantine.close()
    return rows, quarantine, stats


def test_registered_and_sniffs_native_lines_only() -> None:
    assert ADAPTERS["native"] is NativeAdapter
    assert NativeAdapter.sniff("x.jsonl", line(recording()))
    assert NativeAdapter.sniff("x.jsonl", b"not json\n" + line(recording()))
    assert not NativeAdapter.sniff("x.jsonl", line({"messages": [{"role": "user"}]}))
    assert not NativeAdapter.sniff("x.json", b'[{"traj": [], "recordId": 1, "toolCalls": []}]')
    assert not NativeAdapter.sniff("x.jsonl", b"")


def test_maps_every_field_of_the_contract(tmp_path: Path) -> None:
    rows, quarantine, stats = read_all(write(tmp_path / "a.jsonl", line(recording())))
    assert quarantine.total == 0 and stats.records_read == stats.cases == 1
    case = Case.from_row(rows[0])
    uri = str(tmp_path / "a.jsonl")
    assert case.case_id == make_case_id("native", "r-1")
    assert (case.trace_id, case.session_id, case.turn_index) == ("r-1", "s-4", 2)
    assert (case.tenant_id, case.user_id) == ("t-9", "u-7")
    assert case.recorded_at == datetime(2026, 11, 28, 2, 14, 0, 123000, tzinfo=UTC)
    assert case.agent.model_name == "provider/model-2026-10"
    assert json.loads(case.agent.model_params) == {"temperature": 0}
    assert json.loads(case.agent.prompt_variables) == {"shop": "north"}
    assert case.user_input.startswith("refund order")
    assert (case.intent.name, case.intent.confidence) == ("refund", 0.93)
    assert json.loads(case.context.messages) == [{"role": "user", "content": "hi"}]
    assert json.loads(case.context.baseline_state) == {"order:ORD-1": "PENDING"}
    assert case.context.retrieved_chunks[0].index_snapshot_id == "kb@41"
    first, second, third = case.steps
    assert (first.seq, first.kind, first.name, first.occurrence) == (0, "tool", "erp_get_order", 1)
    assert (first.status, json.loads(first.error), first.system) == ("error", {"code": 503}, "ERP")
    assert json.loads(first.response) == {"status": "PENDING", "amount": 120.5}
    assert first.started_at == datetime.fromtimestamp(1764296040.123, tz=UTC)
    assert (first.latency_ms, first.is_mutating) == (83, False)
    # defaults: position as seq, tool kind, ok status; occurrence counts calls of one name
    assert (second.seq, second.kind, second.status, second.occurrence) == (1, "tool", "ok", 2)
    assert second.tokens == 12
    # the volatile requestId is ignored by the lookup hash, so both calls hash the same
    assert first.canonical_args_sha256 == second.canonical_args_sha256
    assert first.canonical_args_sha256 == canonical_args_sha256({"orderId": "ORD-1"})
    assert (third.system, third.is_mutating, third.arguments) == ("PAYMENTS", True, None)
    assert (case.outcome.answer_text, case.outcome.final_state) == ("done", "APPROVED_AND_NOTIFIED")
    assert (case.outcome.status, case.outcome.handoff, case.outcome.handoff_reason) == (
        "success",
        True,
        "angry",
    )
    assert (case.outcome.low_confidence, case.outcome.reward) == (False, 1.0)
    assert (case.source.format, case.source.uri, case.source.position) == ("native", uri, 1)
    assert case.source.source_record_id == "r-1"


def test_optional_fields_may_be_absent(tmp_path: Path) -> None:
    minimal = {
        "recordId": "r-min",
        "sessionId": "s",
        "recordedAt": "2026-11-28T02:14:00",  # no zone: taken as UTC
        "initialUserInput": "hi",
        "toolCalls": [],
    }
    rows, quarantine, _ = read_all(write(tmp_path / "m.jsonl", line(minimal)))
    assert quarantine.total == 0
    case = Case.from_row(rows[0])
    assert (case.trace_id, case.turn_index, case.steps, case.tenant_id) == ("r-min", 0, [], None)
    assert case.recorded_at == datetime(2026, 11, 28, 2, 14, tzinfo=UTC)
    assert case.intent.confidence is None and case.outcome.handoff is None


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.gz", "r.jsonl.zst"])
def test_plain_gzip_and_zstd_read_the_same(tmp_path: Path, name: str) -> None:
    data = b"".join(line(recording(f"r-{i}")) for i in range(25))
    rows, quarantine, stats = read_all(write(tmp_path / name, data))
    assert quarantine.total == 0
    assert [r["source"]["source_record_id"] for r in rows] == [f"r-{i}" for i in range(25)]
    assert [r["source"]["position"] for r in rows] == list(range(1, 26))
    assert stats.bytes_read == (tmp_path / name).stat().st_size


def test_multi_frame_zstd_reads_every_frame(tmp_path: Path) -> None:
    compressor = zstandard.ZstdCompressor()
    frames = [compressor.compress(line(recording(f"r-{i}"))) for i in range(3)]
    path = tmp_path / "frames.jsonl.zst"
    path.write_bytes(b"".join(frames))
    rows, quarantine, _ = read_all(path)
    assert quarantine.total == 0 and len(rows) == 3


def _bad_lines() -> list[tuple[bytes, str, str]]:
    """(line, reason, a word the detail must name) for every broken kind a line can have."""
    # arguments nested 300 deep: orjson parses them but cannot write them back as JSON text
    deep_line = line(recording("r-b8", toolCalls=[{"toolName": "x", "arguments": "DEEP"}]))
    deep_line = deep_line.replace(b'"DEEP"', b"[" * 300 + b"1" + b"]" * 300)
    no_toolcalls = recording("r-b4")
    del no_toolcalls["toolCalls"]
    return [
        (b'{"recordId": "r-b1", "sessionId": ' + SECRET.encode() + b"\n", "invalid_json", "JSON"),
        (
            b'{"recordId": "r-b2", "x": "\xff\xfe' + SECRET.encode() + b'"}\n',
            "encoding_error",
            "UTF-8",
        ),
        (line([SECRET, 1]), "not_an_object", "object"),
        (line(no_toolcalls), "missing_field", "toolCalls"),
        (line(recording("r-b5", turnIndex="2")), "wrong_type", "turnIndex"),
        (line(recording("r-b6", toolCalls={"a": SECRET})), "wrong_type", "toolCalls"),
        (line(recording("r-b7", recordedAt=SECRET)), "wrong_type", "recordedAt"),
        (deep_line, "wrong_type", "toolCalls[0].arguments"),
        (line(recording("r-b9", toolCalls=[{"arguments": {}}])), "missing_field", "toolName"),
        (
            line(recording("r-b10", toolCalls=[{"toolName": "x", "status": "fine"}])),
            "wrong_type",
            "toolCalls[0].status",
        ),
        (line(recording("r-b11", sessionId=None)), "missing_field", "sessionId"),
        (
            line(recording("r-b12", intent={"confidence": "high"})),
            "wrong_type",
            "intent.confidence",
        ),
        # a 65-bit integer parses but fits no int64 column: caught when the batch is built
        (
            line(recording("r-b13", toolCalls=[{"toolName": "x", "tokens": 2**64 - 1}])),
            "wrong_type",
            "canonical schema",
        ),
    ]


@pytest.mark.parametrize("name", ["b.jsonl", "b.jsonl.gz", "b.jsonl.zst"])
def test_each_broken_kind_is_quarantined_and_the_rest_reads(tmp_path: Path, name: str) -> None:
    bad = _bad_lines()
    data, expected, good_ids = b"", {}, []
    for i, (bad_line, reason, word) in enumerate(bad):
        data += line(recording(f"ok-{i}"))  # a good line before each broken one
        good_ids.append(f"ok-{i}")
        data += bad_line
        expected[2 * i + 2] = (reason, word)
    data += b"\n   \n" + line(recording("ok-last"))  # blank lines are skipped, not records
    good_ids.append("ok-last")
    qpath = tmp_path / "q.jsonl"
    rows, quarantine, stats = read_all(
        write(tmp_path / name, data), IngestConfig(batch_rows=4), qpath
    )
    assert [r["source"]["source_record_id"] for r in rows] == good_ids
    entries = read_quarantine(qpath)
    got = {e["position"]: e for e in entries}
    assert set(got) == set(expected)
    for position, (reason, word) in expected.items():
        assert got[position]["reason"] == reason, position
        assert word in got[position]["detail"], (position, got[position]["detail"])
        assert got[position]["uri"] == str(tmp_path / name)
        assert SECRET not in got[position]["detail"]
    assert stats.records_read == len(rows) + len(entries)
    assert sum(quarantine.counts.values()) == len(bad)
    # raw lines are kept in the quarantine file so they can be fixed and replayed
    assert got[2]["raw"].startswith('{"recordId": "r-b1"')
    assert "raw_base64" in got[4]


def test_oversized_line_is_skipped_without_reading_it_whole(tmp_path: Path) -> None:
    big = recording("r-big", initialUserInput="y" * 5000)
    data = line(recording("a")) + line(big) + line(recording("b"))
    qpath = tmp_path / "q.jsonl"
    rows, _, stats = read_all(
        write(tmp_path / "o.jsonl.zst", data), IngestConfig(max_line_bytes=3000), qpath
    )
    assert [r["source"]["source_record_id"] for r in rows] == ["a", "b"]
    [entry] = read_quarantine(qpath)
    assert (entry["reason"], entry["position"]) == ("oversized_line", 2)
    assert "raw" not in entry and str(len(line(big)) - 1) in entry["detail"]
    assert stats.records_read == 3


@pytest.mark.parametrize("name", ["t.jsonl.gz", "t.jsonl.zst"])
def test_truncated_stream_keeps_every_complete_line(tmp_path: Path, name: str) -> None:
    rng = random.Random(7)  # varied text, so a cut in the compressed bytes lands mid-file
    data = b"".join(
        line(recording(f"r-{i}", finalOutputText=rng.randbytes(300).hex())) for i in range(300)
    )
    whole = write(tmp_path / ("whole-" + name), data).read_bytes()
    path = tmp_path / name
    path.write_bytes(whole[: int(len(whole) * 0.6)])
    qpath = tmp_path / "q.jsonl"
    rows, quarantine, stats = read_all(path, quarantine_path=qpath)
    [entry] = read_quarantine(qpath)
    assert entry["reason"] == "truncated_stream"
    assert 0 < len(rows) < 300  # zstd decodes whole blocks (<= 128 KiB) only
    assert [r["source"]["position"] for r in rows] == list(range(1, len(rows) + 1))
    assert entry["position"] == len(rows) + 1
    assert stats.records_read == len(rows) + 1 and quarantine.counts["truncated_stream"] == 1


def test_not_a_gzip_file_is_a_source_error(tmp_path: Path) -> None:
    path = tmp_path / "fake.jsonl.gz"
    path.write_bytes(line(recording()))
    with pytest.raises(SourceError, match="not a gzip stream"):
        read_all(path)
    with pytest.raises(SourceError, match="no such file"):
        read_all(tmp_path / "missing.jsonl")


def test_batches_follow_the_canonical_schema_and_batch_size(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", b"".join(line(recording(f"r-{i}")) for i in range(10)))
    stats = ReadStats()
    batches = list(
        NativeAdapter(IngestConfig(batch_rows=4)).read_batches(str(path), Quarantine(), stats)
    )
    assert [b.num_rows for b in batches] == [4, 4, 2]
    assert all(b.schema == CASE_SCHEMA for b in batches)
    assert stats.cases == 10


ARGUMENT_SAMPLES: list[Any] = [
    {"b": 1, "a": {"z": [3, {"y": 1, "x": 2}], "TimeStamp": 5}},
    {"orderId": "ORD-1", "requestId": "r", "nested": {"ts": 1, "keep": [{"uuid": "u", "v": 1}]}},
    {"note": '"requestId": inside a string stays'},
    {"ключ": "значение", "Ts": 1},
    [{"nonce": 1}, {"a": None}],
    {},
    [],
    "plain text",
    '{"orderId": "ORD-1", "requestId": "x"}',
    42,
    True,
]


@pytest.mark.parametrize("value", ARGUMENT_SAMPLES)
def test_fast_argument_hash_equals_the_shared_canonical_hash(value: Any) -> None:
    converter = NativeConverter("x", IngestConfig().volatile_keys)
    expected = canonical_args_sha256(value, IngestConfig().volatile_keys)
    assert converter.args_hash(value) == expected
    assert converter.text_args_hash(orjson.dumps(value)) == expected
    custom = NativeConverter("x", ["keep"])
    assert custom.args_hash(value) == canonical_args_sha256(value, ["keep"])
