"""E-mail addresses: Presidio's recognizer (tldextract kept offline by the package import)."""

from __future__ import annotations

import re

from presidio_analyzer.predefined_recognizers import EmailRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec


def _built() -> EmailRecognizer:
    """The recognizer with its top-level-domain list (``tldextract``, read from the package's
    snapshot on first use) loaded now, with the analyzer, not inside the first shard."""
    recognizer = EmailRecognizer()
    recognizer.validate_result("warm.up@example.com")
    return recognizer


SPEC = RecognizerSpec(
    name="email",
    entities=("EMAIL_ADDRESS",),
    prefilter=re.compile(r"[^\s@]@[^\s@]"),
    build=lambda cfg: _built(),
)
