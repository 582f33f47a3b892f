"""Chinese mobile numbers: 11 digits starting 13-19, optional +86, optional 3-4-4 separators."""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import (
    CASE_SENSITIVE,
    NO_DIGIT_AFTER,
    NO_DIGIT_BEFORE,
    RecognizerSpec,
)


class ChineseMobileRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern(
            "cn_mobile",
            NO_DIGIT_BEFORE
            + r"(?:(?:\+|00)86[ -]?)?1[3-9]\d(?:\d{8}|[ -]\d{4}[ -]\d{4})"
            + NO_DIGIT_AFTER,
            0.7,
        )
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="CN_MOBILE",
            name="ChineseMobileRecognizer",
            patterns=self.PATTERNS,
            context=["手机", "电话", "mobile", "phone"],
            global_regex_flags=CASE_SENSITIVE,
        )


SPEC = RecognizerSpec(
    name="cn_mobile",
    entities=("CN_MOBILE",),
    prefilter=re.compile(r"1[3-9]\d[ -]?\d{4}[ -]?\d{4}"),
    build=lambda cfg: ChineseMobileRecognizer(),
)
