"""Valid recordings follow the native contract; planted broken lines break exactly one rule."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from golden_distill.synthetic import Truth

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
PREFIX_SYSTEM = {
    "erp_": "ERP",
    "mes_": "MES",
    "crm_": "CRM",
    "fin_": "FINANCE",
    "kb_": "KB",
    "hr_": "HR",
    "wms_": "WMS",
}
REQUIRED = {
    "recordId": str,
    "sessionId": str,
    "recordedAt": str,
    "initialUserInput": str,
    "toolCalls": list,
}


def test_valid_records_follow_the_contract(gz_records: dict) -> None:
    turns = defaultdict(list)
    for rid, rec in gz_records.items():
        for name, typ in REQUIRED.items():
            assert isinstance(rec[name], typ), (rid, name)
        assert rec["recordId"] == rid
        assert ISO.match(rec["recordedAt"])
        assert rec["finalStatus"] in {"success", "handed_off", "failed", "abandoned"}
        assert isinstance(rec["handoff"]["requested"], bool)
        assert isinstance(rec["lowConfidence"], bool)
        assert "reward" not in rec or isinstance(rec["reward"], float)
        turns[rec["sessionId"]].append(rec["turnIndex"])
        for i, call in enumerate(rec["toolCalls"]):
            assert call["stepIndex"] == i
            assert call["status"] in {"ok", "error", "timeout"}
            assert call["kind"] in {"tool", "handoff"}
            assert isinstance(call["isMutating"], bool)
            assert (call["response"] is None) == (call["status"] != "ok")
            assert (call["error"] is None) == (call["status"] == "ok")
            prefix = next((p for p in PREFIX_SYSTEM if call["toolName"].startswith(p)), None)
            if "system" in call:
                assert call["system"] == PREFIX_SYSTEM[prefix]
            if call["isMutating"]:
                assert prefix is not None
            for key in ("amount", "total", "totalAmount"):
                if key in call["arguments"]:
                    assert isinstance(call["arguments"][key], int | float)
    assert all(sorted(v) == list(range(len(v))) for v in turns.values())
    assert any(len(v) == 3 for v in turns.values())


@pytest.mark.parametrize("compress", [None, "gz", "zst"])
def test_broken_lines_are_broken_as_claimed(
    corpus_factory: Callable[..., Path], read_lines: Callable, compress: str | None
) -> None:
    from golden_distill.synthetic import load_truth

    out = corpus_factory(f"broken_{compress}", sessions=80, seed=9, shards=2, compress=compress)
    truth = load_truth(out)
    lines = {f: read_lines(out / f) for f in truth.summary["files"]}
    for b in truth.broken_lines:
        file_lines = lines[b["file"]]
        if b["reason"] == "truncated_stream":
            assert len(file_lines) == b["line"] - 1  # the cut line never decodes
            assert b["file"].endswith((".gz", ".zst"))
            continue
        raw = file_lines[b["line"] - 1]
        if b["reason"] == "invalid_json":
            with pytest.raises(orjson.JSONDecodeError):
                orjson.loads(raw)
            raw.decode("utf-8")  # still valid UTF-8: one reason only
            continue
        rec = orjson.loads(raw)
        if b["reason"] == "oversized_line":
            assert len(raw) == truth.oversized_line_limit + 1
        elif b["reason"] == "missing_field":
            assert len(set(REQUIRED) - set(rec)) == 1
        elif b["reason"] == "wrong_type":
            wrong = [k for k, t in REQUIRED.items() if not isinstance(rec[k], t)]
            assert len(wrong) == 1
    n_truncated = truth.quarantine_counts["truncated_stream"]
    assert n_truncated == (2 if compress else 1)


def test_valid_lines_stay_under_the_limit(
    gz_corpus: Path, gz_truth: Truth, read_lines: Callable
) -> None:
    for f in gz_truth.summary["files"]:
        for i, line in enumerate(read_lines(gz_corpus / f), start=1):
            if len(line) > gz_truth.oversized_line_limit:
                assert {"file": f, "line": i, "reason": "oversized_line"}.items() <= next(
                    b for b in gz_truth.broken_lines if b["file"] == f and b["line"] == i
                ).items()
