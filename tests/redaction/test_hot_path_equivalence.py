"""The cheaper redaction paths decide exactly what the full paths they stand in for did.

* the key pass's own walk (``key_walk.case_keys``) returns the very keys, in the very order
  (the first rule a value is seen under is its rule), and the unknown identifiers that the full
  structural scan (``case_scan.scan_case``) finds;
* the introduced-name recognizer runs only its English pattern on text without a Han character:
  same findings as all its patterns;
* Presidio's pattern loop without its per-call bookkeeping (``lean_patterns.py``) gives
  Presidio's results for every pattern recognizer of the scrubber and the verifier;
* what a process keeps between tables (the caches ``process_caches.forget_values`` empties)
  serves only what would be computed: a table redacted by a process that redacted another
  table before is byte-identical to the same table redacted with nothing kept.

Corpora: the generator's (with its planted personal data), the adversarial probes, tau-bench
runs (airline and retail) and hand-made rows for the edges (verbatim fields that do not fit
their shape, duplicate JSON keys, big integers, key text patterns in object keys).
"""

from __future__ import annotations

import gc
import json
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from adversarial import adversarial_corpus
from golden_test_data import airline_runs_path, all_runs_paths
from presidio_analyzer import PatternRecognizer

from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.redaction import lean_patterns, process_caches
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.key_digests import key_digest
from golden_distill.redaction.key_scan import KeyScanner, no_cyclic_gc
from golden_distill.redaction.key_walk import WalkMemo, case_keys
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.normalise import normalise
from golden_distill.redaction.pseudonym import key_pseudonym, value_token
from golden_distill.redaction.recognizers import introduced_name
from golden_distill.redaction.recognizers.base import CASE_SENSITIVE
from golden_distill.redaction.recognizers.name_cues import find_cued_names
from golden_distill.redaction.recognizers.name_places import find_placed_names
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table
from golden_distill.synthetic import generate_corpus

from .conftest import TEST_SECRET, case, step


def _edge_rows() -> list[dict[str, Any]]:
    dup = '{"order_id": "#W1234567", "order_id": "#W7654321", "note": "ORD-4411"}'
    return [
        case(
            case_id="edge-1",
            user_input="order ORD-20931 for 4111111111111111, hi this is marta quenby",
            steps=[
                step(
                    0,
                    "get order details",  # a tool name that does not fit its shape
                    dup,
                    '{"ORD-77812": {"status": "ok", "big": 123456789012345678901234}}',
                ),
                step(1, "lookup", '{"user_id": "sara_doe_496", "n": 1234567}', "null"),
            ],
        ),
        case(
            case_id="edge-2",
            user_input="我是欧阳娜娜，订单 #W5550001",
            steps=[
                step(0, "find", '  {"tel": "13912345678", "ids": ["A1B2C3D4", 99887766]}\n', "")
            ],
        ),
    ]


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    root = tmp_path_factory.mktemp("hot-path")
    generate_corpus(root / "raw", sessions=60, seed=5)
    ingest([str(root / "raw")], root / "canon")
    adversarial_corpus().write_corpus(root / "adv-raw" / "probes.jsonl")
    ingest([str(root / "adv-raw")], root / "adv-canon")
    out: list[dict[str, Any]] = []
    for folder in ("canon", "adv-canon"):
        for path in sorted((root / folder / "cases").glob("*.parquet")):
            out.extend(pq.read_table(path).to_pylist())
    for i, source in enumerate((airline_runs_path(), all_runs_paths()[1])):
        path = root / f"tau-{i}.json"
        path.write_text(json.dumps(json.loads(source.read_text())[:40]))
        out.extend(ChatAdapter(IngestConfig()).read(str(path), Quarantine(), ReadStats()))
    out.extend(_edge_rows())
    return out


@pytest.mark.parametrize("unknown", ["pseudonymise", "keep"])
def test_key_walk_finds_exactly_the_scans_keys(rows: list[dict[str, Any]], unknown: str) -> None:
    weakened = {"unsafe_allow_weakened": True} if unknown != "pseudonymise" else {}
    config = RedactionConfig(unknown_identifiers=unknown, **weakened)
    scanner = KeyScanner(config, TEST_SECRET)
    assert scanner.text_patterns  # the default config's key text patterns are exercised
    with_keys = 0
    for row in rows:
        scan = scanner.scan(row, inventory=False)
        keys, unknown_ids = case_keys(
            row,
            matcher=scanner.matcher,
            column_keys=scanner.column_keys,
            text_patterns=scanner.text_patterns,
        )
        assert list(keys.items()) == list(scan.index.keys.items()), row.get("case_id")
        assert unknown_ids == scan.unknown_ids, row.get("case_id")
        expected = set(scan.index.keys.items())
        if unknown == "pseudonymise":
            expected |= {(v, scanner.id_rule) for v in scan.unknown_ids}
        assert scanner.keys(row) == expected
        with_keys += bool(keys)
    assert with_keys > len(rows) // 2


def _all_patterns() -> PatternRecognizer:
    return PatternRecognizer(
        supported_entity="PERSON",
        name="IntroducedNameRecognizer",
        patterns=introduced_name.IntroducedNameRecognizer.PATTERNS,
        global_regex_flags=CASE_SENSITIVE,
    )


def _spans(results: list[Any]) -> list[tuple[int, int, float]]:
    return sorted((r.start, r.end, r.score) for r in results)


def test_introduced_names_latin_shortcut_finds_what_every_pattern_finds(
    rows: list[dict[str, Any]],
) -> None:
    recognizer = introduced_name.IntroducedNameRecognizer()
    reference = _all_patterns()
    texts = {
        "Hi, this is Mei Brown",
        "我叫张伟，订单已发货",
        "客户欧阳娜娜的订单",
        "张伟您好",
        "hello Ｍei Brown 我是李雷",
    }
    for row in rows:
        texts.update(s for s in _strings(row) if len(s) < 5000)
    found = 0
    for text in sorted(texts):
        got = _spans(recognizer.analyze(text, ["PERSON"]))
        want = _spans(reference.analyze(text, ["PERSON"])) + [
            (m.start(1), m.end(1), 0.5) for m in introduced_name._ANY_CASE.finditer(text)
        ]
        want += [(a, b, introduced_name.CUED_SCORE) for a, b in find_cued_names(text)]
        want += [(a, b, introduced_name.PLACED_SCORE) for a, b in find_placed_names(text)]
        assert got == sorted(want), text
        found += bool(got)
    assert found > 20


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _published(table: pa.Table) -> list[bytes]:
    return [orjson.dumps(r, default=str, option=orjson.OPT_SORT_KEYS) for r in table.to_pylist()]


def test_an_earlier_table_changes_no_output(rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
    half = table.num_rows // 2
    first, second = table.slice(0, half), table.slice(half)
    key = PseudonymKey(TEST_SECRET)

    def redact(part: pa.Table) -> Any:
        return redact_table(part, Redactor.from_config(RedactionConfig(), key))

    process_caches.forget_values()
    fresh = redact(second)
    process_caches.forget_values()
    redact(first)  # a worker's earlier task fills its caches

    def hits() -> int:  # key pseudonyms repeat in a table through the guard (its bases)
        return key_pseudonym.cache_info().hits + value_token.cache_info().hits

    before = hits()
    warm = redact(second)
    assert hits() > before + 100  # the caches served ...
    assert _published(warm.table) == _published(fresh.table)  # ... and nothing changed
    assert warm.reasons == fresh.reasons and warm.entity_counts == fresh.entity_counts
    assert warm.inventory == fresh.inventory
    assert [q.case_id for q in warm.quarantined] == [q.case_id for q in fresh.quarantined]
    assert fresh.table.num_rows > 50


def test_lean_pattern_loop_gives_presidios_results(rows: list[dict[str, Any]]) -> None:
    redactor = Redactor.from_config(RedactionConfig(), PseudonymKey(TEST_SECRET))
    recognizers = [
        r
        for analyzer in (redactor.analyzer, redactor.verify_extra)
        for r in analyzer.engine.registry.recognizers
        if "_PatternRecognizer__analyze_patterns" in vars(r)
    ]
    names = {type(r).__name__ for r in recognizers}
    assert {"IntroducedNameRecognizer", "EmailRecognizer", "UsSsnRecognizer"} <= names
    texts: set[str] = set(EDGE_TEXTS)
    for row in rows:
        texts.update(s for s in _strings(row) if len(s) < 5000)
    texts.update(n.text for n in map(normalise, list(texts)) if n is not None)
    found = 0
    for recognizer in recognizers:
        for text in sorted(texts):
            lean = recognizer._PatternRecognizer__analyze_patterns(text)
            presidio = PatternRecognizer._PatternRecognizer__analyze_patterns(recognizer, text)
            assert _results(lean) == _results(presidio), (type(recognizer).__name__, text)
            found += bool(lean)
    assert found > 100


def _results(results: list[Any]) -> list[tuple[str, int, int, float, str]]:
    return sorted(
        (r.entity_type, r.start, r.end, r.score, r.recognition_metadata["recognizer_name"])
        for r in results
    )


EDGE_TEXTS = [
    "call me at 415-555-0132 or mail mei.brown@example.com",
    "card 4111 1111 1111 1111, ssn 078-05-1120, iban DE89370400440532013000",
    "wallet 1BoatSLRHtKNngkdXEeobR76b53LETtpyT, 我叫张伟，客户欧阳娜娜的订单",
    "12 Baker Street, London; 742 evergreen terrace springfield",
]


def test_analyzers_find_what_they_found_without_the_shortcuts(
    rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole analyzer (Presidio's engine around the recognizers, normalisation, the
    verifier's extras) with the Latin shortcut and the lean loop, against one built without
    either: the same findings for every string of the corpora."""
    texts: set[str] = set(EDGE_TEXTS) | {"Dear Barnaby Quell, your order shipped"}
    for row in rows:
        texts.update(s for s in _strings(row) if len(s) < 5000)
    ordered = sorted(texts)
    config = RedactionConfig()
    fast = Redactor.from_config(config, PseudonymKey(TEST_SECRET))
    with monkeypatch.context() as m:
        m.setattr(lean_patterns, "install", lambda recognizer: False)
        m.setattr(introduced_name.IntroducedNameRecognizer, "LATIN_SHORTCUT", False)
        plain = Redactor.from_config(config, PseudonymKey(TEST_SECRET))
    found = {}
    for name, redactor in (("fast", fast), ("plain", plain)):
        found[name] = (
            redactor.analyzer.analyze_many(ordered, config.score_threshold),
            redactor.verify_extra.analyze_many(ordered, config.score_threshold),
        )
    assert found["fast"] == found["plain"]
    persons = sum(any(f.entity_type == "PERSON" for f in fs) for fs in found["fast"][0].values())
    assert persons > 20


def test_key_walk_memo_replays_exactly_what_a_fresh_walk_finds(
    rows: list[dict[str, Any]],
) -> None:
    """One memo over every row, twice (the second pass only replays): the same keys in the same
    order and the same unknown identifiers as a walk without memo, row by row."""
    scanner = KeyScanner(RedactionConfig(), TEST_SECRET)
    walk = {
        "matcher": scanner.matcher,
        "column_keys": scanner.column_keys,
        "text_patterns": scanner.text_patterns,
    }
    memo = WalkMemo()
    for _ in range(2):
        for row in rows:
            keys, unknown = case_keys(row, **walk)
            memo_keys, memo_unknown = case_keys(row, **walk, memo=memo)
            assert list(memo_keys.items()) == list(keys.items()), row.get("case_id")
            assert memo_unknown == unknown, row.get("case_id")
    assert memo.json and memo.matches and memo.rules  # the memo was used, not bypassed
    assert any(memo.json.values()) and any(memo.matches.values())


def test_key_pass_digests_equal_those_of_a_walk_without_memo(rows: list[dict[str, Any]]) -> None:
    scanner = KeyScanner(RedactionConfig(), TEST_SECRET)
    pairs: set[Any] = set()
    for row in rows:
        pairs |= scanner.keys(row)  # no memo
    found = scanner.digests(rows + rows)  # repeated rows: every text replayed from the memo
    originals = {key_digest(TEST_SECRET, rule.key_type, value) for value, rule in pairs}
    bases = {
        key_digest(
            TEST_SECRET,
            rule.key_type,
            key_pseudonym(value, rule.key_type, TEST_SECRET, rule.prefix),
        )
        for value, rule in pairs
    }
    assert sorted(found.originals.tolist()) == sorted(originals)
    assert sorted(found.bases.tolist()) == sorted(bases)
    assert found.keys > 100


def test_no_cyclic_gc_pauses_and_restores_the_collector() -> None:
    assert gc.isenabled()
    with no_cyclic_gc():
        assert not gc.isenabled()
        with no_cyclic_gc():  # nested: the inner block does not re-enable it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with no_cyclic_gc():
            pass
        assert not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()
