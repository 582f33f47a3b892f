"""Every planted personal value and key is where the truth says, valid, in both languages."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import orjson

from golden_distill.synthetic import Truth
from golden_distill.synthetic.pii import ENTITY_TYPES, cn_id_valid, iban_valid, luhn_valid

AREA = re.compile(r"^toolCalls\[(\d+)\]\.(arguments|response|error)$")


def _area_blob(rec: dict[str, Any], where: str) -> bytes:
    m = AREA.match(where)
    if m:
        return orjson.dumps(rec["toolCalls"][int(m.group(1))][m.group(2)])
    if where.startswith("context."):
        key = {
            "context.messages": "messages",
            "context.memory": "memory",
            "context.retrievedChunks": "retrievedChunks",
        }[where]
        return orjson.dumps(rec["context"][key])
    return rec[where].encode()


def test_planted_values_appear_where_claimed(gz_truth: Truth, gz_records: dict) -> None:
    checked = 0
    for rid, r in gz_truth.records.items():
        rec = gz_records[rid]
        for _etype, value, where in r.pii:
            assert where, (rid, _etype)
            for area in where:
                assert value.encode() in _area_blob(rec, area), (rid, _etype, area)
                checked += 1
        line = orjson.dumps(rec)
        for _ktype, value in r.keys:
            assert value.encode() in line
    assert checked > 1000


def test_every_entity_type_and_key_type_is_planted(gz_truth: Truth) -> None:
    assert set(gz_truth.summary["pii_counts"]) == set(ENTITY_TYPES)
    assert {
        "order",
        "user",
        "tenant",
        "account",
        "reservation",
        "payment_method",
        "session",
        "trace",
    } <= set(gz_truth.summary["key_counts"])


def test_values_pass_their_validators(gz_truth: Truth) -> None:
    validators = {
        "CN_RESIDENT_ID": cn_id_valid,
        "BANK_CARD": luhn_valid,
        "CREDIT_CARD": luhn_valid,
        "IBAN_CODE": iban_valid,
        "CN_MOBILE": lambda v: re.fullmatch(r"1[3-9]\d{9}", v) is not None,
    }
    seen = Counter()
    for r in gz_truth.records.values():
        for etype, value, _ in r.pii:
            if etype in validators:
                assert validators[etype](value), (etype, value)
                seen[etype] += 1
        for ktype, value in r.keys:
            if ktype == "order":
                assert re.fullmatch(r"ORD-\d{6}", value)
    assert set(seen) == set(validators)


def test_pii_reaches_every_kind_of_place(gz_truth: Truth) -> None:
    places = Counter()
    for r in gz_truth.records.values():
        for _, _, where in r.pii:
            for w in where:
                places[re.sub(r"\[\d+\]", "[]", w)] += 1
    for wanted in (
        "initialUserInput",
        "finalOutputText",
        "context.messages",
        "context.memory",
        "context.retrievedChunks",
        "toolCalls[].arguments",
        "toolCalls[].response",
        "toolCalls[].error",
    ):
        assert places[wanted] > 0, wanted


def test_nested_lists_and_reuse_across_places(gz_truth: Truth, gz_records: dict) -> None:
    in_string_list = in_object_list = reused = 0
    for rid, r in gz_truth.records.items():
        rec = gz_records[rid]
        for call in rec["toolCalls"]:
            resp, args = call["response"] or {}, call["arguments"]
            if resp.get("aliases") and any(v == resp["aliases"][0] for _, v, _ in r.pii):
                in_string_list += 1
            if args.get("contact", {}).get("phones"):
                in_string_list += 1
            if resp.get("addresses") or resp.get("contacts"):
                in_object_list += 1
        for etype, _, where in r.pii:
            tool_places = [w for w in where if w.startswith("toolCalls")]
            if etype == "PERSON" and "initialUserInput" in where and tool_places:
                reused += 1
    assert in_string_list and in_object_list and reused


def test_english_and_chinese_text(gz_truth: Truth, gz_records: dict) -> None:
    langs = Counter()
    for rid in gz_truth.records:
        text = gz_records[rid]["initialUserInput"]
        langs["zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"] += 1
    assert langs["zh"] > 20 and langs["en"] > 20
