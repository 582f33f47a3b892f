"""IP addresses (v4 and v6): Presidio's recognizer."""

from __future__ import annotations

import re

from presidio_analyzer.predefined_recognizers import IpRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec

SPEC = RecognizerSpec(
    name="ip_address",
    entities=("IP_ADDRESS",),
    # a text holds ``\d{1,3}(\.\d{1,3}){3}`` or ``[0-9A-Fa-f]{0,4}::?[0-9A-Fa-f]{1,4}:`` exactly
    # when it holds these (the outer repeats shrunk to the one digit / none they may be): the
    # same answer, at half the cost (no search from every hex letter of the text)
    prefilter=re.compile(r"\d\.\d{1,3}\.\d{1,3}\.\d|::?[0-9A-Fa-f]{1,4}:"),
    build=lambda cfg: IpRecognizer(),
)
