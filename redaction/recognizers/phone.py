"""Phone numbers: Presidio's ``phonenumbers`` recognizer, regions from config, minus misfires.

With the default setup it fires on amounts (``3376.17``) and IP addresses and spends most of a
run's time trying eight regions. Here the regions are configurable and a hit must carry at least
eight digits and must not look like a decimal amount or a dotted IP. A bare run of digits (no
``+``, no separators) is only a phone number when a phone word precedes it: catalogues are full
of ten-digit product and item ids that are valid US numbers.
"""

from __future__ import annotations

import re

from presidio_analyzer import RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts
from presidio_analyzer.predefined_recognizers import PhoneRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec

MIN_DIGITS = 8
_AMOUNT = re.compile(r"[-+]?\$?\d{1,3}(?:,\d{3})*(?:\.\d{1,2})?|\d+\.\d+")
_IP = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_CONTEXT = re.compile(
    r"(?i)phone|tel\b|tel:|call|mobile|cell|whatsapp|sms|text me|reach me|number is|"
    r"电话|手机|联系|致电|号码"
)
CONTEXT_WINDOW = 48


class FilteredPhoneRecognizer(PhoneRecognizer):
    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        kept = []
        for result in super().analyze(text, entities, nlp_artifacts):
            span = text[result.start : result.end].strip()
            digits = sum(ch.isdigit() for ch in span)
            if digits < MIN_DIGITS or _AMOUNT.fullmatch(span) or _IP.fullmatch(span):
                continue
            before = text[max(0, result.start - CONTEXT_WINDOW) : result.start]
            if span.isdigit() and not _CONTEXT.search(before):
                continue
            kept.append(result)
        return kept


SPEC = RecognizerSpec(
    name="phone",
    entities=("PHONE_NUMBER",),
    prefilter=re.compile(r"\d(?:[\s().+-]{0,3}\d){7,}"),
    build=lambda cfg: FilteredPhoneRecognizer(
        supported_regions=tuple(cfg.phone_regions), leniency=1
    ),
)
