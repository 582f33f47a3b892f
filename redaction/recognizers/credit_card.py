"""Payment cards in Western formats: Presidio's recognizer (Luhn-checked)."""

from __future__ import annotations

import re

from presidio_analyzer.predefined_recognizers import CreditCardRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec

SPEC = RecognizerSpec(
    name="credit_card",
    entities=("CREDIT_CARD",),
    prefilter=re.compile(r"\d(?:[ -]?\d){11,}"),
    build=lambda cfg: CreditCardRecognizer(),
)
