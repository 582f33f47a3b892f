"""IBANs: Presidio's recognizer (country format and mod-97 checked)."""

from __future__ import annotations

import re

from presidio_analyzer.predefined_recognizers import IbanRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec

SPEC = RecognizerSpec(
    name="iban",
    entities=("IBAN_CODE",),
    prefilter=re.compile(r"(?<=[A-Za-z]{2})\d\d ?[A-Za-z0-9]{4}"),
    build=lambda cfg: IbanRecognizer(),
)
