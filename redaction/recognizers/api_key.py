"""API keys with a recognisable shape: OpenAI-style ``sk-...``, AWS ``AKIA...``, GitHub tokens."""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import (
    CASE_SENSITIVE,
    NO_ALNUM_AFTER,
    NO_ALNUM_BEFORE,
    RecognizerSpec,
)


class ApiKeyRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern(
            "openai_style", NO_ALNUM_BEFORE + r"sk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{20,}", 0.9
        ),
        Pattern(
            "aws_access_key", NO_ALNUM_BEFORE + r"(?:AKIA|ASIA)[0-9A-Z]{16}" + NO_ALNUM_AFTER, 0.9
        ),
        Pattern("github_token", NO_ALNUM_BEFORE + r"gh[pousr]_[A-Za-z0-9]{36,}", 0.9),
        Pattern("github_pat", NO_ALNUM_BEFORE + r"github_pat_[A-Za-z0-9_]{40,}", 0.9),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="SECRET",
            name="ApiKeyRecognizer",
            patterns=self.PATTERNS,
            global_regex_flags=CASE_SENSITIVE,
        )


SPEC = RecognizerSpec(
    name="api_key",
    entities=("SECRET",),
    prefilter=re.compile(r"sk-|AKIA|ASIA|gh[pousr]_|github_pat_"),
    build=lambda cfg: ApiKeyRecognizer(),
)
