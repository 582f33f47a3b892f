"""``Bearer <token>`` credentials (HTTP Authorization headers copied into logs or arguments)."""

from __future__ import annotations

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import CASE_SENSITIVE, Keywords, RecognizerSpec


class BearerTokenRecognizer(PatternRecognizer):
    # the span is the token itself (the word "Bearer" is not secret); `regex` allows the
    # variable-width look-behind
    PATTERNS = [
        Pattern(
            "bearer",
            r"(?<=(?i:bearer)[ \t]{1,4})[A-Za-z0-9\-._~+/]{16,}=*",
            0.85,
        )
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="SECRET",
            name="BearerTokenRecognizer",
            patterns=self.PATTERNS,
            global_regex_flags=CASE_SENSITIVE,
        )


SPEC = RecognizerSpec(
    name="bearer_token",
    entities=("SECRET",),
    prefilter=Keywords("bearer"),
    build=lambda cfg: BearerTokenRecognizer(),
)
