"""The redaction CPU shortcuts find exactly what the paths they skip find.

* the analyzer's lean call of Presidio's engine (``TextAnalyzer._lean_analyze``): the same
  findings, in the same order, as ``AnalyzerEngine.analyze``;
* detect-secrets' keyword plugin is skipped on text without a deny-listed word and a quote;
* ``normalise``'s first check (``apply_layers`` runs every layer without it);
* the phone recognizer's windows without Presidio's explanation (``FilteredPhoneRecognizer``).

Compared on every string of the generator's corpus (with its planted personal data), the
adversarial probes, tau-bench runs and edge texts, for the scrubber's analyzer and the
verifier's extra one, each built and run with and without the shortcuts.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from adversarial import adversarial_corpus
from case_strings import case_strings

from golden_distill.datasets.ingest import ingest
from golden_distill.redaction import analyzer as analyzer_module
from golden_distill.redaction import normalise
from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.recognizers import phone, secrets
from golden_distill.redaction.redactor import Redactor
from golden_distill.synthetic import generate_corpus

from .conftest import TEST_SECRET

EDGE_TEXTS = [
    "call me at 415-555-0132 or mail mei.brown@example.com",
    "card 4111 1111 1111 1111, ssn 078-05-1120, iban DE89370400440532013000",
    "wallet 1BoatSLRHtKNngkdXEeobR76b53LETtpyT, 我叫张伟，客户欧阳娜娜的订单",
    "config: password = \"hunter2hunter2\", api_KEY: 'Zx9Qw8Er7Ty6Ui5Op4'",
    'PASSWD="S3cr3t-Pa55w0rd"; secret("abcdefgh12345")',
    "contraseña: 'Abc123def456'",
    "mail JOHN.DOE AT EXAMPLE DOT COM, dial 4 1 5 5 5 5 0 1 3 2",
    "Dear Barnaby Quell, your order shipped",
]


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    from golden_test_data import all_runs_paths

    root = tmp_path_factory.mktemp("cpu_shortcuts")
    generate_corpus(root / "raw", sessions=40, seed=11)
    adversarial_corpus().write_corpus(root / "raw" / "probes.jsonl")
    ingest([str(root / "raw")], root / "canon")
    table = pa.concat_tables(
        pq.read_table(p) for p in sorted((root / "canon" / "cases").glob("*.parquet"))
    )
    found: set[str] = set(EDGE_TEXTS)
    for row in table.to_pylist():
        found.update(s for s in case_strings(row) if len(s) < 5000)
    ingest([str(p) for p in all_runs_paths()[:1]], root / "tau")
    for p in sorted((root / "tau" / "cases").glob("*.parquet")):
        for row in pq.read_table(p).to_pylist()[:40]:
            found.update(s for s in case_strings(row) if len(s) < 5000)
    return sorted(found)


def _findings(redactor: Redactor, texts: list[str], threshold: float) -> tuple[Any, Any]:
    out = (
        redactor.analyzer.analyze_many(texts, threshold),
        redactor.verify_extra.analyze_many(texts, threshold),
    )
    return out


def test_analyzers_find_what_they_find_without_the_cpu_shortcuts(
    texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = RedactionConfig()
    fast = Redactor.from_config(config, PseudonymKey(TEST_SECRET))
    assert fast.analyzer.lean and fast.verify_extra.lean
    found_fast = _findings(fast, texts, fast.scan_threshold)
    with monkeypatch.context() as m:
        m.setattr(TextAnalyzer, "LEAN_ENGINE", False)
        m.setattr(secrets, "_KEYWORD_GATE", None)
        m.setattr(phone.FilteredPhoneRecognizer, "LEAN", False)
        m.setattr(analyzer_module, "normalise", normalise.apply_layers)
        plain = Redactor.from_config(config, PseudonymKey(TEST_SECRET))
        assert not plain.analyzer.lean
        found_plain = _findings(plain, texts, plain.scan_threshold)
    assert found_fast == found_plain  # same findings, in the same order, for every text
    kinds = {f.entity_type for fs in found_fast[0].values() for f in fs}
    assert {"PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "SECRET", "CREDIT_CARD"} <= kinds


def test_keyword_gate_is_checked_against_the_installed_ruleset() -> None:
    """The gate is on only when detect-secrets' keyword regexes are the ones it was proved for,
    and it lets in every text the keyword plugin finds a secret in."""
    assert secrets.keyword_gate_is_sound()
    plugin = next(p for p in secrets.ruleset() if type(p).__name__ == "KeywordDetector")
    for text in EDGE_TEXTS:
        if list(plugin.analyze_string(text)):
            assert secrets._keyword_plugin_may_match(text), text
    assert not secrets._keyword_plugin_may_match('"no words here"')
    assert not secrets._keyword_plugin_may_match("password without any quote")


def test_shortened_prefilters_answer_as_the_long_ones(texts: list[str]) -> None:
    """The IP and street pre-filters search for the shortest form of each match (one digit of
    ``\\d{1,3}`` / ``\\d{1,6}``, none of ``[0-9A-Fa-f]{0,4}``): a text holds one exactly when
    it holds a match of the long form."""
    import re

    from golden_distill.redaction.recognizers import ip_address, street_address

    long_ip = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|[0-9A-Fa-f]{0,4}::?[0-9A-Fa-f]{1,4}:")
    long_street = re.compile(
        rf"\d{{1,6}} [A-Z][a-z]|{street_address._LOWER_STREET}"
        r"|[省市区县][\u4e00-\u9fff]{0,20}[路街道巷]"
    )
    edges = ["1.2.3.4", "a 1234.5.67.890 b", "fe80::1:", "ab::cd", "::1", "12345678 Main St"]
    edges += ["9 main street", "at 1234567 oak avenue", "北京市朝阳区建国路", "7 Days"]
    hits = {"ip": 0, "street": 0}
    for text in [*texts, *edges]:
        short_ip = bool(ip_address.SPEC.prefilter.search(text))
        assert short_ip == bool(long_ip.search(text)), text
        short_street = bool(street_address.SPEC.prefilter.search(text))
        assert short_street == bool(long_street.search(text)), text
        hits["ip"] += short_ip
        hits["street"] += short_street
    assert hits["ip"] > 3 and hits["street"] > 3
