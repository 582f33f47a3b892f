"""Phone numbers by shape (North-American style, with separators and extensions).

``phonenumbers`` validates area codes, so test data and typos (``001-711-950-3892x828``,
``(591)341-7776``) slip through it; a privacy filter must not depend on a number being
dialable. This pattern needs separators or parentheses, so bare digit runs (ids) never match.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import (
    CASE_SENSITIVE,
    NO_DIGIT_AFTER,
    NO_DIGIT_BEFORE,
    RecognizerSpec,
)

_EXT = r"(?:[ ]?(?:x|ext\.?|extension)[ ]?\d{1,6})?"


#: A North-American number written with separators or parentheses (and an extension).
NANP_SEPARATED = (
    NO_DIGIT_BEFORE
    + r"(?:(?:\+|00)?1[-. ]?|001[-. ])?(?:\(\d{3}\)[ ]?|\d{3}[-.])\d{3}[-.]\d{4}"
    + _EXT
    + NO_DIGIT_AFTER
)


class PhoneShapeRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern("nanp_separated", NANP_SEPARATED, 0.55),
        Pattern(
            "intl_plus",
            NO_DIGIT_BEFORE + r"\+\d{1,3}(?:[-. ]\d{2,4}){2,4}" + _EXT + NO_DIGIT_AFTER,
            0.5,
        ),
        Pattern(
            "digits_after_phone_word",
            # whole words: "Smartphone" and "Headphones" are products, not phone cues
            r"(?<=(?i:\b(?:(?:tele)?phones?|tel|mobile|cell(?:phone)?|call me|reach me)\b"
            r"|电话|手机)[^0-9\n]{0,20})"
            r"\+?\d{10,12}" + NO_DIGIT_AFTER,
            0.5,
        ),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="PHONE_NUMBER",
            name="PhoneShapeRecognizer",
            patterns=self.PATTERNS,
            global_regex_flags=CASE_SENSITIVE,
        )


SPEC = RecognizerSpec(
    name="phone_shape",
    entities=("PHONE_NUMBER",),
    prefilter=re.compile(r"\d{3}\)?[-. ]?\d{3}[-.]\d{4}|\+\d|\d{10}"),
    build=lambda cfg: PhoneShapeRecognizer(),
)
