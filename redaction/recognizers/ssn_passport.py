"""US social security and passport numbers, found only with their cue ("my ssn is ...",
"passport number ...", and "passport" in the languages of the e-mail words: "Reisepass",
"passeport", "pasaporte", ...): without one, nine digits or a letter and eight digits are too
common."""

from __future__ import annotations

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import Keywords, RecognizerSpec

_SSN_CUE = r"(?i:\bssn|\bsocial security(?: number| no\.?)?)(?:\s+(?:is|was|:))?[\s:#]{0,3}"
#: "passport" in English and the languages of the e-mail words (``decode_layers.py``)
_PASSPORT_CUE = (
    r"(?i:\bpassport|\breisepass|\bpasseport|\bpasaporte|\bpassaporto|\bpaszport|\bpaspoort"
    r"|\bпаспорт)(?:\s+(?i:number|no\.?|#|nummer|nr\.?|numéro|número|numero|numer|номер))?"
    r"(?:\s+(?:is|was|ist|est|es|è|é|:))?[\s:#]{0,3}"
)


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
    prefilter=Keywords(
        "ssn",
        "social security",
        "passport",
        "reisepass",
        "passeport",
        "pasaporte",
        "passaporto",
        "paszport",
        "paspoort",
        "паспорт",
    ),
    build=lambda cfg: SsnPassportRecognizer(),
)
