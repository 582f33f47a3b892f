"""Chinese resident identity card numbers (18 characters, ISO 7064 MOD 11-2 check digit),
compact or split 6-8-4 by spaces or hyphens (region, birth date, sequence and check)."""

from __future__ import annotations

import re
from datetime import date

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import (
    CASE_SENSITIVE,
    NO_ALNUM_AFTER,
    NO_DIGIT_BEFORE,
    RecognizerSpec,
)

_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CHECK = "10X98765432"


def cn_id_checksum_ok(value: str) -> bool:
    """True when the 18th character is the MOD 11-2 check of the first 17 and the date is real."""
    value = value.upper().replace(" ", "").replace("-", "")
    if len(value) != 18 or not value[:17].isdigit():
        return False
    try:
        date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    total = sum(int(d) * w for d, w in zip(value[:17], _WEIGHTS, strict=True))
    return _CHECK[total % 11] == value[17]


class ChineseResidentIdRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern(
            "cn_resident_id",
            NO_DIGIT_BEFORE
            + r"[1-8]\d{5}(?:18|19|20)\d{2}[01]\d[0-3]\d\d{3}[\dXx]"
            + NO_ALNUM_AFTER,
            0.5,
        ),
        Pattern(  # written in its three parts: region, birth date, sequence and check
            "cn_resident_id_split",
            NO_DIGIT_BEFORE + r"[1-8]\d{5}([ -])(?:18|19|20)\d{6}\1\d{3}[\dXx]" + NO_ALNUM_AFTER,
            0.5,
        ),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="CN_RESIDENT_ID",
            name="ChineseResidentIdRecognizer",
            patterns=self.PATTERNS,
            context=["身份证", "证件", "id card"],
            global_regex_flags=CASE_SENSITIVE,
        )

    def validate_result(self, pattern_text: str) -> bool:
        return cn_id_checksum_ok(pattern_text)


SPEC = RecognizerSpec(
    name="cn_resident_id",
    entities=("CN_RESIDENT_ID",),
    prefilter=re.compile(r"\d{17}[\dXx]|\d{6}[ -]\d{8}[ -]\d{3}[\dXx]"),
    build=lambda cfg: ChineseResidentIdRecognizer(),
)
