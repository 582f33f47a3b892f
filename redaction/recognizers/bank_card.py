"""Bank cards (16-19 digits, Luhn), e.g. UnionPay ``62...``, also right next to Chinese text.

Presidio's CREDIT_CARD pattern relies on ``\\b`` and misses "卡号6222021234567890123"; this one
uses digit lookarounds. Where both fire on the same span the analyzer keeps CREDIT_CARD only.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import (
    CASE_SENSITIVE,
    NO_DIGIT_AFTER,
    NO_DIGIT_BEFORE,
    RecognizerSpec,
    luhn_ok,
)


class BankCardRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern(
            "bank_card_plain",
            NO_DIGIT_BEFORE + r"[1-9]\d{15,18}" + NO_DIGIT_AFTER,
            0.3,
        ),
        Pattern(
            "bank_card_grouped",
            NO_DIGIT_BEFORE + r"[1-9]\d{3}(?:[ -]\d{4}){3}(?:[ -]?\d{1,3})?" + NO_DIGIT_AFTER,
            0.3,
        ),
        # shorter card numbers (Maestro: 12-15 digits) only right after a card word
        Pattern(
            "card_after_card_word",
            r"(?<=(?i:card|卡号|卡)[^0-9\n]{0,16})\d{12,15}" + NO_DIGIT_AFTER,
            0.3,
        ),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="BANK_CARD",
            name="BankCardRecognizer",
            patterns=self.PATTERNS,
            context=["卡号", "银行卡", "card"],
            global_regex_flags=CASE_SENSITIVE,
        )

    def validate_result(self, pattern_text: str) -> bool:
        digits = re.sub(r"\D", "", pattern_text)
        return 12 <= len(digits) <= 19 and luhn_ok(digits)


SPEC = RecognizerSpec(
    name="bank_card",
    entities=("BANK_CARD",),
    prefilter=re.compile(r"\d{4}[ -]?\d{4}[ -]?\d{4}"),
    build=lambda cfg: BankCardRecognizer(),
)
