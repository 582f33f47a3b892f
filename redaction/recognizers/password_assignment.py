"""Passwords written as assignments: ``password=...``, ``pwd: ...``, ``密码：...``.

Only the value is the span, so the same password is also found (by propagation) where it
appears alone elsewhere in the case.
"""

from __future__ import annotations

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import CASE_SENSITIVE, Keywords, RecognizerSpec


class PasswordAssignmentRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern(
            "password_assignment",
            r"(?<=(?i:password|passwd|pwd|passcode|密码|口令)[\"']?[ \t]{0,3}[=:：]"
            r"[ \t]{0,3}[\"']?)"
            r"[^\s\"',;&，。\u4e00-\u9fff]{4,}",
            0.8,
        )
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="SECRET",
            name="PasswordAssignmentRecognizer",
            patterns=self.PATTERNS,
            global_regex_flags=CASE_SENSITIVE,
        )


SPEC = RecognizerSpec(
    name="password_assignment",
    entities=("SECRET",),
    prefilter=Keywords("passw", "pwd", "passcode", "密码", "口令"),
    build=lambda cfg: PasswordAssignmentRecognizer(),
)
