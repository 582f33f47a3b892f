"""Phone numbers: Presidio's ``phonenumbers`` recognizer, regions from config, minus misfires.

With the default setup it fires on amounts (``3376.17``) and IP addresses and spends most of a
run's time trying eight regions. Here the regions are configurable and a hit must carry at least
eight digits and must not look like a decimal amount or a dotted IP. A bare run of digits (no
``+``, no separators) is only a phone number when a phone word precedes it: catalogues are full
of ten-digit product and item ids that are valid US numbers.
"""

from __future__ import annotations

import re
from functools import cache

import phonenumbers
from presidio_analyzer import EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts
from presidio_analyzer.predefined_recognizers import PhoneRecognizer

from golden_distill.redaction.recognizers.base import RecognizerSpec
from golden_distill.redaction.recognizers.phone_shape import NANP_SEPARATED

MIN_DIGITS = 8
_AMOUNT = re.compile(r"[-+]?\$?\d{1,3}(?:,\d{3})*(?:\.\d{1,2})?|\d+\.\d+")
_IP = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
#: Phone words before a bare digit run, whole words only: a "Smartphone" or "Headphones"
#: product name beside its catalogue id is no phone cue.
_CONTEXT = re.compile(
    r"(?i)\b(?:(?:tele)?phones?|tel|call(?:ed|ing|back)?|mobile|cell(?:phone)?|whatsapp|sms"
    r"|text me|reach me|number is)\b|电话|手机|联系|致电|号码"
)
CONTEXT_WINDOW = 48


#: A phone-number candidate: digits with phone separators, not glued to an id ("CUST-1234...",
#: "INV-2026-...") or a word. Only candidates reach ``phonenumbers``, one short window each.
#: Nor glued to a version ("gpt-4.1-2025-04-14": "1-2025-04-14" is a valid Polish number).
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_/-])(?<!\d\.)(?:\+|00)?\(?\d[\d \t().-]{5,22}\d")
#: The pre-filter: eight digits with phone separators, not glued to an id or a word.
_CANDIDATE_START = re.compile(r"(?<![A-Za-z0-9_/-])(?:\+|00)?\(?\d(?:[\s().-]{0,3}\d){7,}")
_DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{4}")
#: An ISO date inside a span: with thirteen regions one of them takes "1-2025-04-14".
_ISO_DATE_INSIDE = re.compile(
    r"(?<!\d)(?:19|20)\d{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?!\d)"
)
_EXTENSION_ROOM = 12
_NANP = re.compile(NANP_SEPARATED)
_WARM_TYPES = (phonenumbers.PhoneNumberType.FIXED_LINE, phonenumbers.PhoneNumberType.MOBILE)


@cache
def _warm_metadata() -> None:
    """Every region's fixed-line and mobile patterns compiled and kept (~0.4 s, once per
    process): a "+49 ..." in any text makes ``phonenumbers`` validate against Germany's
    patterns whatever the configured regions."""
    phonenumbers.enable_pattern_cache()
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in _WARM_TYPES:
            example = phonenumbers.example_number_for_type(region, kind)
            if example is not None:
                phonenumbers.number_type(example)


#: numbers in the shapes the matcher meets (international, national with area codes,
#: extensions), parsed once per region when the recognizer is built
_WARM_UP = (
    "call +1 312 555 0148 or (415) 555-0177 x12, 020 7946 0958, 01 42 68 53 00, 0412 345 678, "
    "+44 7700 900456, 0049 151 23456789"
)
#: Arithmetic on amounts ("(544.29 - 471.82) * 2", a calculator tool's argument): a decimal
#: with cents and an operator between spaces; phone groups never carry two-digit decimals
#: beside a spaced operator.
_DECIMAL = re.compile(r"\d\.\d{2}(?![\d.])")
_OPERATOR = re.compile(r"\s[-+*/]\s")


def _before(text: str, start: int) -> str:
    """The ``CONTEXT_WINDOW`` characters before ``start``, widened to a whole first word: a
    window cut inside "Smartphone" would read a phone cue "phone" at its edge."""
    i = max(0, start - CONTEXT_WINDOW)
    while i > 0 and text[i - 1].isalnum():
        i -= 1
    return text[i:start]


def _rejected(span: str, before: str) -> bool:
    digits = sum(ch.isdigit() for ch in span)
    if digits < MIN_DIGITS or _AMOUNT.fullmatch(span) or _IP.fullmatch(span):
        return True
    if _DATE.fullmatch(span) or _ISO_DATE_INSIDE.search(span):
        return True
    if _DECIMAL.search(span) and _OPERATOR.search(span):
        return True
    # a bare run, also in parentheses ("Patio Umbrella (3111466194)": an item id)
    return span.strip("()").isdigit() and not _CONTEXT.search(before)


class FilteredPhoneRecognizer(PhoneRecognizer):
    def warmed(self) -> FilteredPhoneRecognizer:
        """``phonenumbers`` loads each region's metadata and compiles its patterns on first
        use, through the ``re`` module's bounded cache (so patterns of many regions are
        compiled again and again): keep them (``enable_pattern_cache``) and compile them when
        the analyzer is built (``_warm_metadata``, once per process), not inside the first
        shard's redaction."""
        _warm_metadata()
        for region in self.supported_regions:  # the matcher compiles its patterns lazily
            list(phonenumbers.PhoneNumberMatcher(_WARM_UP, region, leniency=self.leniency))
        return self

    #: Windows go to ``_matches`` (Presidio's loop without the explanations); tests compare.
    LEAN = True

    def _matches(
        self, text: str, entities: list[str], nlp_artifacts: object, covered: int | None = None
    ) -> list:
        """``PhoneRecognizer.analyze`` minus its explanation: per match Presidio parses the
        number again (without a region) only to name a region in the explanation text, which
        nothing here reads; the results (type, span, score, recognizer) are the same."""
        if not self.LEAN:
            return super().analyze(text, entities, nlp_artifacts)  # type: ignore[arg-type]
        metadata = {
            RecognizerResult.RECOGNIZER_NAME_KEY: self.name,
            RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: self.id,
        }
        entity = self.supported_entities[0]
        results = []
        for region in self.supported_regions:
            for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=self.leniency):
                results.append(
                    RecognizerResult(
                        entity, match.start, match.end, self.SCORE, None, dict(metadata)
                    )
                )
            # a match from the window's start to the candidate's end already holds the whole
            # candidate: another region can only find it again or a part of it, which
            # remove_duplicates would drop (three quarters of the phonenumbers passes)
            if covered is not None and any(r.start <= 0 and r.end >= covered for r in results):
                break
        return EntityRecognizer.remove_duplicates(results) if results else []

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        kept = []
        for cand in _CANDIDATE.finditer(text):
            start = cand.start()
            if _rejected(cand.group(0).strip(), _before(text, start)):
                continue
            shape = _NANP.match(text, start)
            if shape is not None and shape.end() >= cand.end():
                # a North-American number with separators: a phone by its format alone (as
                # phone_shape.py says), without four phonenumbers passes over the window
                kept.append(
                    RecognizerResult(
                        self.supported_entities[0], start, shape.end(), self.SCORE, None,
                        {RecognizerResult.RECOGNIZER_NAME_KEY: self.name,
                         RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: self.id},
                    )
                )  # fmt: skip
                continue
            end = min(len(text), cand.end() + _EXTENSION_ROOM)
            window = text[start:end]
            for result in self._matches(window, entities, nlp_artifacts, cand.end() - start):
                result.start += start
                result.end += start
                span = text[result.start : result.end].strip()
                if not _rejected(span, _before(text, result.start)):
                    kept.append(result)
        return kept


SPEC = RecognizerSpec(
    name="phone",
    entities=("PHONE_NUMBER",),
    prefilter=_CANDIDATE_START,
    build=lambda cfg: FilteredPhoneRecognizer(
        supported_regions=tuple(cfg.phone_regions), leniency=1
    ).warmed(),
)
