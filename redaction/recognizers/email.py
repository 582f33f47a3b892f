"""E-mail addresses: Presidio's recognizer (tldextract kept offline by the package import)."""

from __future__ import annotations

import re

from presidio_analyzer.predefined_recognizers import EmailRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec

SPEC = RecognizerSpec(
    name="email",
    entities=("EMAIL_ADDRESS",),
    prefilter=re.compile(r"[^\s@]@[^\s@]"),
    build=lambda cfg: EmailRecognizer(),
)
