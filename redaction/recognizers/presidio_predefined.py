"""Presidio's own predefined recognizers that apply to agent data, for the verifier only.

The verifier must see more than the scrubber, or a blind spot of the curated set is a blind spot
of both passes. These run after scrubbing on every string (behind one cheap pre-filter): US
social security numbers (Presidio's pattern and validity rules), crypto wallet addresses, and
Presidio's own e-mail, credit card, IBAN and IP recognizers (independent implementations of
what the curated set also looks for).
"""

from __future__ import annotations

import re

from presidio_analyzer import EntityRecognizer
from presidio_analyzer.predefined_recognizers import (
    CreditCardRecognizer,
    CryptoRecognizer,
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    UsSsnRecognizer,
)

from golden_distill.redaction.recognizers.base import RecognizerSpec


class PredefinedRecognizers:
    """Builds the predefined recognizers (one registry entry each)."""

    @staticmethod
    def build() -> list[EntityRecognizer]:
        return [
            UsSsnRecognizer(),
            CryptoRecognizer(),
            EmailRecognizer(),
            CreditCardRecognizer(),
            IbanRecognizer(),
            IpRecognizer(),
        ]


ENTITIES = ("US_SSN", "CRYPTO", "EMAIL_ADDRESS", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS")

SPEC = RecognizerSpec(
    name="presidio_predefined",
    entities=ENTITIES,
    prefilter=re.compile(
        r"@|\d{3}[- .]?\d{2}[- .]?\d{4}|\d{4}[- ]?\d{4}[- ]?\d{4}|[A-Z]{2}\d{2}[A-Z0-9]{4}"
        r"|\b[13bc][a-km-zA-HJ-NP-Z0-9]{25,}|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|[0-9a-fA-F]*:[0-9a-fA-F]*:"
    ),
    build=lambda cfg: PredefinedRecognizers.build(),  # type: ignore[arg-type,return-value]
)
