"""The digit gate may only skip pre-filter parts that truly cannot match without a digit.

A part wrongly marked "needs a digit" would hide digit-free texts from its recognizer (a leak),
so the proof is tested three ways: the regex constructs one by one, every pre-filter part on
real matching texts with their digits taken out, and what counts as a digit over all of Unicode.
"""

from __future__ import annotations

import re
import sys

import pytest

from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import KNOWN_RECOGNIZERS, RedactionConfig
from golden_distill.redaction.prefilter_digits import HAS_DIGIT, min_digits, needs_digit
from golden_distill.redaction.recognizers import SPECS
from golden_distill.redaction.recognizers.base import AnyOf, Keywords
from golden_distill.redaction.recognizers.presidio_predefined import SPEC as PREDEFINED

ALL_SPECS = [SPECS[n] for n in KNOWN_RECOGNIZERS] + [PREDEFINED]


@pytest.mark.parametrize(
    ("pattern", "digits"),
    [
        (r"\d{4}[ -]?\d{4}", 8),
        (r"1[3-9]\d", 3),
        (r"[0-9]|bc1", 1),  # the minimum over alternatives
        (r"[0-9]|bc", 0),
        (r"(?:ab|\d)\d", 1),
        (r"(\d\d)+", 2),
        (r"\d*x", 0),  # zero repeats allowed
        (r"\d{2,}?", 2),  # lazy repeat
        (r"(?>\d\d)", 2),  # atomic group
        (r"\d++", 1),  # possessive repeat
        (r"(?<=\d)x", 0),  # lookarounds consume nothing
        (r"(?!\d)\w", 0),
        (r"[^0-9]", 0),  # negated class
        (r"[0-9A-F]", 0),  # a class that also takes letters
        (r"\w", 0),
        (r".", 0),
        (r"(\d)\1", 1),  # the backreference is not counted
        (r"(x)?(?(1)\d|y)", 0),  # conditionals are not modelled
        (r"٣", 1),  # a non-ASCII digit literal (Nd)
        (r"(?i)\d[0-9]", 2),
        (r"(?a)\d", 1),
    ],
)
def test_min_digits_per_construct(pattern: str, digits: int) -> None:
    assert min_digits(pattern) == digits


def test_only_str_regexes_and_literals_are_judged() -> None:
    assert needs_digit(re.compile(r"\d{3}"))
    assert needs_digit("-----BEGIN 1")
    assert not needs_digit("://")
    assert not needs_digit(re.compile(rb"\d{3}"))  # bytes patterns are not modelled
    assert not needs_digit(Keywords("ssn"))
    assert not needs_digit(AnyOf(re.compile(r"\d")))  # a whole AnyOf: the analyzer splits it


def test_each_gated_part_stops_matching_once_its_texts_lose_their_digits() -> None:
    """Texts each part matches (cards, phones, ids, IBANs, SSNs, wallets), with every digit
    replaced by a letter or removed: a part judged to need a digit must match none of them."""
    samples = [
        "4111 1111 1111 1111",
        "card 4111-1111-1111-1111 exp",
        "call +44 20 7946 0958 or (212) 555-0134",
        "手机13812345678",
        "id 11010519491231002X",
        "IBAN DE89 3704 0044 0532 0130 00",
        "ssn 123-45-6789",
        "wallet 1BoatSLRHtKNngkdXEeobR76b53LETtpyT",
        "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
        "6222 0212 3456 7890 123",
        "10.0.0.7",
        "ship to SW1A 1AA",
        "at 51.5007, -0.1246",
        "〒100-0001 東京都千代田区",
        "VIN 1M8GDM9AXKP042788",
        "CPF 529.982.247-25",
    ]
    gated = 0
    for spec in ALL_SPECS:
        parts = spec.prefilter.parts if isinstance(spec.prefilter, AnyOf) else (spec.prefilter,)
        for part in parts:
            if not needs_digit(part):
                continue
            gated += 1
            assert any(part.search(s) for s in samples), f"{spec.name}: no sample matches"
            for sample in samples:
                for stripped in (re.sub(r"\d", "x", sample), re.sub(r"\d", "", sample)):
                    assert not HAS_DIGIT(stripped)
                    assert not part.search(stripped), f"{spec.name} matched {stripped!r}"
    assert gated == 15


def test_the_analyzer_gates_exactly_the_digit_recognizers() -> None:
    analyzer = TextAnalyzer(RedactionConfig(), ALL_SPECS)
    assert len(analyzer._checks) - len(analyzer._checks_without_digit) == 15
    without = {e for _, _, entities, _ in analyzer._checks_without_digit for e in entities}
    assert without.isdisjoint({"PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "CN_MOBILE"})
    assert {"EMAIL_ADDRESS", "PERSON", "SECRET", "IP_ADDRESS"} <= without
    # a digit-free text still reaches the recognizers that need no digit
    assert "EMAIL_ADDRESS" in analyzer.candidate_entities("write to marta@example.org")
    assert "PHONE_NUMBER" in analyzer.candidate_entities("call 212 555 0134 now")


def test_has_digit_and_the_digit_classes_agree_over_all_of_unicode() -> None:
    """What the gate tests (``HAS_DIGIT``) is exactly Nd, and every class the proof counts as
    a digit (``\\d``, 0-9 ranges, digit literals, with or without IGNORECASE) matches only Nd."""
    classes = [re.compile(p) for p in (r"\d", r"[0-9]", r"(?i)[0-9]", r"(?i)\d", r"(?i)7")]
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if ch.isdecimal():
            assert HAS_DIGIT(ch)
            continue
        assert not HAS_DIGIT(ch), hex(code)
        for digit_class in classes:
            assert not digit_class.match(ch), (digit_class.pattern, hex(code))


def test_a_pattern_the_proof_cannot_parse_is_never_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    from golden_distill.redaction import prefilter_digits

    def unparseable(pattern: str, flags: int = 0) -> int:
        raise ValueError("unknown opcode")

    monkeypatch.setattr(prefilter_digits, "min_digits", unparseable)
    assert not needs_digit(re.compile(r"\d{4}"))
