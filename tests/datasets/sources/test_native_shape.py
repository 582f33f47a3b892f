"""The msgspec-typed native reader: exact recorded JSON text, error mapping, batch building."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyarrow as pa
import pytest

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.quarantine import Quarantine, read_quarantine
from golden_distill.datasets.schema import CASE_SCHEMA, STEP_KINDS, STEP_STATUSES
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.native import NativeAdapter
from golden_distill.datasets.sources.native_record import NativeConverter, record_error
from golden_distill.datasets.sources.native_shape import DECODER, StepKind, StepStatus

SECRET = "Zebulon-Shape-Secret-9931"  # must never reach a quarantine detail

BASE = {
    "recordId": "r-1",
    "sessionId": "s-1",
    "recordedAt": "2026-11-28T02:14:00Z",
    "initialUserInput": "hi",
}


def read(path: Path, config: IngestConfig | None = None) -> tuple[pa.Table, list[dict[str, Any]]]:
    qpath = path.with_suffix(".q.jsonl")
    quarantine = Quarantine(qpath)
    batches = list(NativeAdapter(config).read_batches(str(path), quarantine, ReadStats()))
    quarantine.close()
    for batch in batches:
        batch.validate(full=True)  # null JSON-text slots are well-formed Arrow
    table = pa.Table.from_batches(batches, schema=CASE_SCHEMA)
    return table, read_quarantine(qpath) if qpath.exists() else []


def test_step_vocabularies_match_the_schema() -> None:
    assert set(typing.get_args(StepKind)) == {*STEP_KINDS, ""}
    assert set(typing.get_args(StepStatus)) == {*STEP_STATUSES, ""}


def test_json_values_are_stored_exactly_as_recorded(tmp_path: Path) -> None:
    # spaced, key order kept, unicode escapes kept: the recorded bytes, not a re-serialisation
    line = (
        b'{"recordId":"r-1","sessionId":"s","recordedAt":"2026-11-28T02:14:00Z",'
        b'"initialUserInput":"hi","modelParams": { "temperature" : 0.50 },'
        b'"promptVariables":null,"context":{"memory":{"b":1,"a":"\\u00e9"},"messages":[]},'
        b'"toolCalls":[{"toolName":"erp_get_order","arguments":{ "z": 1, "a": [1, 2] },'
        b'"response":"plain","error":"boom \\"quoted\\""},'
        b'{"toolName":"x","arguments":null,"response":null,"error":{"code": 5}},'
        b'{"toolName":"x","kind":"","status":""}]}\n'
    )
    path = tmp_path / "exact.jsonl"
    path.write_bytes(line)
    table, quarantined = read(path)
    assert quarantined == []
    [case] = table.to_pylist()
    assert case["agent"]["model_params"] == '{ "temperature" : 0.50 }'
    assert case["agent"]["prompt_variables"] is None  # recorded null
    assert case["context"]["memory"] == '{"b":1,"a":"\\u00e9"}'
    assert case["context"]["messages"] == "[]"
    assert case["context"]["env_versions"] is None  # absent
    first, second, third = case["steps"]
    assert first["arguments"] == '{ "z": 1, "a": [1, 2] }'
    assert first["canonical_args_sha256"] == canonical_args_sha256({"a": [1, 2], "z": 1})
    assert first["response"] == '"plain"'  # a JSON string value, as JSON text
    assert first["error"] == 'boom "quoted"'  # a string error is the string itself
    assert (second["arguments"], second["canonical_args_sha256"], second["response"]) == (
        None,
        None,
        None,
    )
    assert second["error"] == '{"code": 5}'
    assert (third["kind"], third["status"], third["error"]) == ("tool", "ok", None)


@pytest.mark.parametrize(
    "text",
    [
        b'{ "orderId" : "ORD-1", "RequestId" : "x" }',  # spaced: a volatile key still found
        b'{"order\\u0049d":"ORD-1","request\\u0049d":"x"}',  # escaped key names
        b'{"a":{"\\u212aey":1},"idempotency\\u212aey":"k"}',  # KELVIN SIGN lower-cases to "k"
        b'[{"ts": 1, "keep": {"nonce": 2, "x": [{"uuid": 3}]}}]',
        b'{"n": 1.50, "m": -0, "big": 12345678901234567890}',
        b'"{\\"orderId\\": \\"ORD-1\\"}"',  # arguments recorded as a JSON string
    ],
)
def test_hash_from_recorded_text_equals_the_shared_canonical_hash(text: bytes) -> None:
    converter = NativeConverter("x", IngestConfig().volatile_keys)
    expected = canonical_args_sha256(orjson.loads(text), IngestConfig().volatile_keys)
    assert converter.text_args_hash(text) == expected
    assert converter.text_args_hash(text) == expected  # memoised: same answer


def _shape_error(overrides: dict[str, Any]) -> tuple[str, str]:
    record = {**BASE, "toolCalls": [], **overrides}
    with pytest.raises(msgspec.ValidationError) as caught:
        DECODER.decode(orjson.dumps(record))
    err = record_error(caught.value)
    return err.reason, err.detail


@pytest.mark.parametrize(
    ("overrides", "reason", "detail"),
    [
        ({"sessionId": None}, "missing_field", "sessionId"),
        ({"toolCalls": [{"arguments": {}}]}, "missing_field", "toolCalls[0].toolName"),
        ({"toolCalls": [{"toolName": None}]}, "missing_field", "toolCalls[0].toolName"),
        ({"turnIndex": -1}, "wrong_type", "turnIndex: expected int >= 0"),
        ({"turnIndex": 2**40}, "wrong_type", "turnIndex: expected int <= 2147483647"),
        ({"turnIndex": SECRET}, "wrong_type", "turnIndex: expected int | null, got str"),
        (
            {"toolCalls": [{"toolName": "x"}, {"toolName": "y", "stepIndex": 1.5}]},
            "wrong_type",
            "toolCalls[1].stepIndex",
        ),
        ({"toolCalls": [None]}, "wrong_type", "toolCalls[0]: expected object, got null"),
        ({"toolCalls": [{"toolName": "x", "kind": SECRET}]}, "wrong_type", "model|tool"),
        ({"toolCalls": [{"toolName": "x", "status": SECRET}]}, "wrong_type", "ok|error"),
        ({"context": {"retrievedChunks": [{"text": 3}]}}, "wrong_type", "retrievedChunks[0].text"),
        ({"handoff": {"requested": "yes"}}, "wrong_type", "handoff.requested"),
    ],
)
def test_validation_errors_become_reasons_naming_the_path(
    overrides: dict[str, Any], reason: str, detail: str
) -> None:
    got_reason, got_detail = _shape_error(overrides)
    assert got_reason == reason
    assert detail in got_detail
    assert SECRET not in got_detail


def test_root_errors_and_unknown_messages_stay_generic() -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        DECODER.decode(b'{"sessionId": "s"}')
    assert (record_error(caught.value).reason, record_error(caught.value).detail) == (
        "missing_field",
        "recordId",
    )


def test_bad_bytes_the_decoder_skips_are_still_encoding_errors(tmp_path: Path) -> None:
    good = orjson.dumps({**BASE, "toolCalls": []})
    lines = [
        good[:-1] + b',"unknownField":"\xff' + SECRET.encode() + b'"}',  # skipped by msgspec
        good[:-1] + b',"modelParams":{"k":"\xfe"}}',  # kept raw by msgspec
        good[:-1] + b',"context":{"memory":' + b"[" * 3000 + b"]" * 3000 + b"}}",  # too deep
        good.replace(b'"r-1"', b'""'),  # empty record id
        good,
    ]
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    table, quarantined = read(path)
    assert [s["position"] for s in table["source"].to_pylist()] == [5]
    got = {q["position"]: (q["reason"], q["detail"]) for q in quarantined}
    assert got[1][0] == got[2][0] == "encoding_error"
    assert got[3][0] == "invalid_json"
    assert got[4] == ("missing_field", "recordId (empty)")
    assert all(SECRET not in detail for _, detail in got.values())


def test_bad_records_in_one_batch_are_found_and_the_rest_kept(tmp_path: Path) -> None:
    deep = {"toolName": "x", "arguments": "DEEP"}
    records = []
    for i in range(40):
        calls: list[Any] = [{"toolName": "erp_get_order", "arguments": {"i": i}}]
        if i in (3, 17):
            calls.append({"toolName": "x", "tokens": 2**64 - 1})  # fits no int64 column
        if i == 29:
            calls.append(deep)
        if i == 33:
            calls.append({"toolName": "x", "error": "SURROGATE"})
        records.append({**BASE, "recordId": f"r-{i}", "toolCalls": calls})
    data = b"\n".join(orjson.dumps(r) for r in records)
    data = data.replace(b'"DEEP"', b"[" * 300 + b"]" * 300)
    data = data.replace(b"SURROGATE", b"\\ud800")
    path = tmp_path / "batch.jsonl"
    path.write_bytes(data + b"\n")
    table, quarantined = read(path, IngestConfig(batch_rows=16))
    ids = [s["source_record_id"] for s in table["source"].to_pylist()]
    assert ids == [f"r-{i}" for i in range(40) if i not in (3, 17, 29, 33)]
    got = {q["position"]: (q["reason"], q["detail"]) for q in quarantined}
    assert set(got) == {4, 18, 30, 34}
    assert got[4][0] == got[18][0] == "wrong_type" and "canonical schema" in got[4][1]
    assert got[30] == (
        "wrong_type",
        "toolCalls[1].arguments: expected a JSON value that can be canonicalised",
    )
    assert got[34][0] == "invalid_json"  # both parsers refuse a lone surrogate escape
    # the hash of a kept record is unchanged by the failures around it
    steps = table["steps"].to_pylist()
    assert json.loads(steps[0][0]["arguments"]) == {"i": 0}
    assert steps[0][0]["canonical_args_sha256"] == canonical_args_sha256({"i": 0})
