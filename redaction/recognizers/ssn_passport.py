"""US social security and passport numbers, found only with their cue ("my ssn is ...",
"passport number ..."): without one, nine digits or a letter and eight digits are too common."""

from __future__ import annotations

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import Keywords, RecognizerSpec

_SSN_CUE = r"(?i:\bssn|\bsocial security(?: number| no\.?)?)(?:\s+(?:is|was|:))?[\s:#]{0,3}"
_PASSPORT_CUE = r"(?i:\bpassport)(?:\s+(?i:number|no\.?|#))?(?:\s+(?:is|was|:))?[\s:#]{0,3}"


class SsnPassportRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern("us_ssn", rf"(?<={_SSN_CUE})\d{{3}}[- ]?\d{{2}}[- ]?\d{{4}}(?![0-9])", 0.7),
        Pattern("passport", rf"(?<={_PASSPORT_CUE})[A-Z0-9]{{6,9}}(?![A-Za-z0-9])", 0.6),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="US_SSN",
            name="SsnPassportRecognizer",
            patterns=self.PATTERNS,
        )

    def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):  # type: ignore[no-untyped-def]
        results = super().analyze(text, entities, nlp_artifacts, regex_flags)
        for r in results:
            if r.recognition_metadata and "passport" in str(r.recognition_metadata):
                r.entity_type = "PASSPORT"
        return results


SPEC = RecognizerSpec(
    name="ssn_passport",
    entities=("US_SSN",),
    prefilter=Keywords("ssn", "social security", "passport"),
    build=lambda cfg: SsnPassportRecognizer(),
)
