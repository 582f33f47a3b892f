"""End to end on the generator's output: nothing planted survives, keys are remapped one to one,
structure is untouched, output is deterministic in (input, key)."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.ingest import ingest
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.pseudonym import key_pseudonym
from golden_distill.redaction.redactor import OPTED_OUT, Redactor
from golden_distill.redaction.shard import ShardRedactionResult, redact_table
from golden_distill.synthetic import generate_corpus, load_truth

DIGIT_ENTITIES = {"PHONE_NUMBER", "CREDIT_CARD", "BANK_CARD", "CN_MOBILE", "CN_RESIDENT_ID"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("gen")
    generate_corpus(root / "raw", sessions=150, seed=11)
    ingest([str(root / "raw")], root / "canon")
    truth = load_truth(root / "raw")
    table = pa.concat_tables(
        pq.read_table(p) for p in sorted((root / "canon" / "cases").glob("*.parquet"))
    )
    return {"root": root, "truth": truth, "table": table}


def _redact(corpus: dict[str, Any], secret: bytes, rows: int | None = None) -> ShardRedactionResult:
    redactor = Redactor.from_config(
        RedactionConfig(), PseudonymKey(secret), opt_out_tenants=[corpus["truth"].opt_out_tenant]
    )
    table = corpus["table"] if rows is None else corpus["table"].slice(0, rows)
    return redact_table(table, redactor)


@pytest.fixture(scope="module")
def redacted(corpus: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    secret = b"generator-test-key-" + b"x" * 32
    result = _redact(corpus, secret)
    path = tmp_path_factory.mktemp("out") / "cases.parquet"
    # uncompressed, no dictionary pages: the file's bytes hold every string as written
    pq.write_table(result.table, path, compression="none", use_dictionary=False)
    return {"result": result, "path": path, "secret": secret, "bytes": path.read_bytes()}


def _planted(truth: Any) -> list[tuple[str, str]]:
    out = []
    for rec in truth.records.values():
        for entity, value, _where in rec.pii:
            out.append((entity, value))
            if entity in DIGIT_ENTITIES:
                digits = re.sub(r"\D", "", value)
                if len(digits) >= 7:
                    out.append((entity, digits))
    return out


def test_no_planted_personal_value_survives(corpus: dict, redacted: dict) -> None:
    data: bytes = redacted["bytes"]
    text = orjson.dumps(redacted["result"].table.to_pylist(), default=str).decode()
    planted = _planted(corpus["truth"])
    assert len(planted) > 200
    survivors = {(e, v) for e, v in planted if v.encode() in data or v in text}
    assert not survivors, f"{len(survivors)} planted values survive, types: " + str(
        sorted({e for e, _ in survivors})
    )


def test_opted_out_tenant_never_passes(corpus: dict, redacted: dict) -> None:
    result: ShardRedactionResult = redacted["result"]
    opted = [
        r for r in corpus["truth"].records.values() if r.tenant_id == corpus["truth"].opt_out_tenant
    ]
    assert opted, "the generator plants an opted-out tenant"
    assert result.reasons[OPTED_OUT] >= len(opted)
    assert result.cases_out + len(result.quarantined) == corpus["table"].num_rows
    assert set(result.reasons) == {OPTED_OUT}, "nothing else should fail verification"


def test_every_key_is_remapped_one_to_one(corpus: dict, redacted: dict) -> None:
    cfg = RedactionConfig()
    prefix = {kf.key_type: kf.prefix for kf in cfg.key_fields}
    secret = redacted["secret"]
    originals: dict[str, str] = {}
    for rec in corpus["truth"].records.values():
        for key_type, value in rec.keys:
            originals[value] = key_type
    pseudonyms = {v: key_pseudonym(v, t, secret, prefix[t]) for v, t in originals.items()}
    text = orjson.dumps(redacted["result"].table.to_pylist(), default=str).decode()
    emitted = set(pseudonyms.values())
    # an original may only appear where it is (by a format-keeping collision) a pseudonym
    leaked = [v for v in originals if v in text and v not in emitted]
    assert not leaked, f"{len(leaked)} keys not remapped"
    # one original -> one pseudonym: each appears wherever its original was
    rows_in = {
        r["case_id"]: orjson.dumps(r, default=str).decode() for r in corpus["table"].to_pylist()
    }
    checked = 0
    for row in redacted["result"].table.to_pylist():
        before, after = rows_in[row["case_id"]], orjson.dumps(row, default=str).decode()
        for value, pseudo in pseudonyms.items():
            if value in before:
                assert pseudo in after
                checked += 1
    assert checked > 100


def _json_shape(value: Any) -> Any:
    """Keys, numbers and booleans of a JSON value, with strings blanked."""
    if isinstance(value, dict):
        return {k: _json_shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_shape(v) for v in value]
    return "<s>" if isinstance(value, str) else value


_NUMBER_TOKENS = re.compile(r"(?<=[:\[,])\s*-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?=\s*[,}\]])")


def test_structure_amounts_statuses_and_tools_are_unchanged(corpus: dict, redacted: dict) -> None:
    before = {r["case_id"]: r for r in corpus["table"].to_pylist()}
    compared = 0
    for after in redacted["result"].table.to_pylist():
        src = before[after["case_id"]]
        assert len(after["steps"]) == len(src["steps"])
        assert after["outcome"]["status"] == src["outcome"]["status"]
        for s_in, s_out in zip(src["steps"], after["steps"], strict=True):
            assert (s_out["name"], s_out["status"], s_out["kind"], s_out["seq"]) == (
                s_in["name"],
                s_in["status"],
                s_in["kind"],
                s_in["seq"],
            )
            for field in ("arguments", "response"):
                if s_in[field] is None:
                    continue
                a, b = orjson.loads(s_in[field]), orjson.loads(s_out[field])
                shape_a, shape_b = _json_shape(a), _json_shape(b)
                if shape_a != shape_b:  # only personal numbers (phones) may become strings
                    assert _differs_only_in_personal_numbers(shape_a, shape_b)
                assert _NUMBER_TOKENS.findall(s_in[field]) == _NUMBER_TOKENS.findall(
                    s_out[field]
                ) or _has_numeric_key(a)
                compared += 1
    assert compared > 300


def _differs_only_in_personal_numbers(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_differs_only_in_personal_numbers(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_differs_only_in_personal_numbers, a, b))
    return a == b or (isinstance(a, int | float) and b == "<s>")


def _has_numeric_key(value: Any) -> bool:
    return 'Id":' in orjson.dumps(value).decode()


def test_same_input_and_key_give_identical_output(corpus: dict, redacted: dict) -> None:
    again = _redact(corpus, redacted["secret"]).table
    assert again.equals(redacted["result"].table)


def test_another_key_gives_other_pseudonyms(corpus: dict, redacted: dict) -> None:
    other = _redact(corpus, b"another-key-" + b"y" * 32, rows=40).table
    same = _redact(corpus, redacted["secret"], rows=40).table
    a = [r["tenant_id"] for r in same.to_pylist()]
    b = [r["tenant_id"] for r in other.to_pylist()]
    assert len(a) == len(b) > 10 and all(x != y for x, y in zip(a, b, strict=True))


def test_redaction_column_counts_types_never_values(redacted: dict) -> None:
    for row in redacted["result"].table.to_pylist():
        counts = orjson.loads(row["redaction"])
        assert all(
            re.fullmatch(r"[A-Z][A-Z0-9_]*", k) and isinstance(v, int) for k, v in counts.items()
        )
    assert redacted["result"].entity_counts["PERSON"] > 0
