"""Pre-filters may only skip what their recognizer cannot find: each must be a superset.

A text no pre-filter matches never reaches Presidio, so a pre-filter narrower than its recognizer
is a silent leak. Every recognizer here (the curated ones and the verifier's predefined ones) is
run on its own, without any pre-filter, over every string of a generated corpus, of the
adversarial corpus, their normalised forms and edge cases (tabs after a cue, characters that a
case-insensitive pattern folds: ſ, the Kelvin sign, dotless ı, İ); wherever it finds something,
its pre-filter and the analyzer's (flattened) pre-filter checks must let the text in.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from adversarial import adversarial_corpus
from case_strings import case_strings

from golden_distill.datasets.ingest import ingest
from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import KNOWN_RECOGNIZERS, RedactionConfig
from golden_distill.redaction.normalise import normalise
from golden_distill.redaction.recognizers import SPECS
from golden_distill.redaction.recognizers.base import AnyOf, Keywords, fold_case
from golden_distill.redaction.recognizers.presidio_predefined import SPEC as PREDEFINED
from golden_distill.synthetic import generate_corpus

EDGE_CASES = [
    "Set-Cookie: SESSIONID=9F8E7D6C5B4A3928; Path=/",
    "sshpass -p hunter22 ssh ops@host",
    "2026-11-30 auth ok user=jsmith",
    "ship to SW1A 1AA please",
    "〒100-0001 東京都千代田区千代田1-1",
    "lat 51.5007, lon -0.1246",
    "hi\tMarta Quenby, your order shipped",
    "Mr\tJohn Smith will call back",
    "Dr.\tAnna Lee",
    "contact\tMei Brown today",
    "THIS IS marta quenby",
    "thiſ is marta quenby",  # long s: (?i) "s"
    "thanK you, Mei Brown",  # Kelvin sign: (?i) "k"
    "Hİ, John Smith",  # dotted capital I: (?i) "i" in the regex module
    "hı, John Smith",  # dotless i: (?i) "i" in re
    "api_KEY=Zx9Qw8Er7Ty6Ui5Op4",
    "credentıal: hunter2hunter2",
    "PASSWORD is S3cr3t-Pa55w0rd",
    "connect mysql://root:MyS9l-pa55@10.0.0.7/app",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "CPF 529.982.247-25 para a nota",
    "name,aadhaar\nRavi,534716920182",
    "my SIN is 130 692 544",
    "mi CURP es GOMA850315MDFRRN02",
    "Bitte an Hauptstraße 12, 10115 Berlin liefern",
    "P<DEUMUSTERFRAU<<ERIKA<LUISE<<<<<<<<<<<<<<<<\nC4X7Q2R915DEU8503150M3101012<<<<<<<<<<<<<<<0",
]


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("prefilters")
    generate_corpus(root / "raw", sessions=60, seed=5)
    adversarial_corpus().write_corpus(root / "raw" / "probes.jsonl")
    ingest([str(root / "raw")], root / "canon")
    table = pa.concat_tables(
        pq.read_table(p) for p in sorted((root / "canon" / "cases").glob("*.parquet"))
    )
    found = list(
        dict.fromkeys([*(x for row in table.to_pylist() for x in case_strings(row)), *EDGE_CASES])
    )
    forms = [n.text for n in map(normalise, found) if n is not None]
    return list(dict.fromkeys([*found, *forms]))


@pytest.mark.parametrize("name", [*KNOWN_RECOGNIZERS, PREDEFINED.name])
def test_prefilter_lets_in_every_text_its_recognizer_finds_something_in(
    name: str, texts: list[str]
) -> None:
    spec = PREDEFINED if name == PREDEFINED.name else SPECS[name]
    config = RedactionConfig()
    built = spec.build(config)
    recognizers = built if isinstance(built, list) else [built]
    analyzer = TextAnalyzer(config, [spec])
    entities = list(spec.entities)
    hits = 0
    for text in texts:
        found = [r for rec in recognizers for r in rec.analyze(text, entities, None)]
        if not found:
            continue
        hits += 1
        assert spec.prefilter.search(text), f"{name}: pre-filter drops a text with a finding"
        assert analyzer.candidate_entities(text), f"{name}: analyzer skips a text with a finding"
    assert hits, f"{name}: the corpus never exercises this recognizer"


def test_the_analyzers_flattened_checks_equal_each_prefilter(texts: list[str]) -> None:
    """The analyzer splits ``AnyOf`` pre-filters into parts and folds case once per text: the
    entity types it asks about are exactly those whose pre-filter matches."""
    specs = [SPECS[n] for n in KNOWN_RECOGNIZERS] + [PREDEFINED]
    analyzer = TextAnalyzer(RedactionConfig(), specs)
    assert any(isinstance(s.prefilter, AnyOf) for s in specs)
    for text in texts:
        expected = {e for s in specs if s.prefilter.search(text) for e in s.entities}
        assert set(analyzer.candidate_entities(text)) == expected


def test_keywords_fold_like_case_insensitive_patterns() -> None:
    words = Keywords("this is", "key", "hi,")
    for text in ("THIS IS", "thiſ is", "KEY", "Hİ,", "hı,"):
        assert words.search(text), text
    assert fold_case("Straße") == "strasse"
    assert not words.search("nothing to see")
