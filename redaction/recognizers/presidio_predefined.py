"""Presidio's own predefined recognizers that apply to agent data, for the verifier only.

The verifier must see more than the scrubber, or a blind spot of the curated set is a blind spot
of both passes. These run after scrubbing on every string behind one cheap pre-filter: US social
security numbers without any cue (Presidio's pattern and validity rules; the scrubber only takes
them with a cue) and crypto wallet addresses. Presidio's e-mail, credit card, IBAN and IP
recognizers are already part of the curated set (and of the verifier's floor).
"""

from __future__ import annotations

import re

from presidio_analyzer import EntityRecognizer
from presidio_analyzer.predefined_recognizers import CryptoRecognizer, UsSsnRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec


class PredefinedRecognizers:
    """Builds the predefined recognizers (one registry entry each)."""

    @staticmethod
    def build() -> list[EntityRecognizer]:
        return [UsSsnRecognizer(), CryptoRecognizer()]


ENTITIES = ("US_SSN", "CRYPTO")

SPEC = RecognizerSpec(
    name="presidio_predefined",
    entities=ENTITIES,
    prefilter=re.compile(
        r"(?<!\d)\d{3}[- .]?\d{2}[- .]?\d{4}(?!\d)"
        r"|(?<![A-Za-z0-9])(?:[13][a-km-zA-HJ-NP-Z1-9]{25,34}|bc1[a-z0-9]{20,})(?![A-Za-z0-9])"
    ),
    build=lambda cfg: PredefinedRecognizers.build(),  # type: ignore[arg-type,return-value]
)
