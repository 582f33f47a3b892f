"""National and other government ids, and device ids: Presidio's maintained recognizers.

Presidio ships country-specific recognizers with their published formats and check digits (UK
National Insurance and driving licence numbers, Italian fiscal codes, Spanish NIF/NIE, Finnish
personal identity codes, Singapore NRIC/FIN, Australian TFN and ABN, Indian PAN, Korean RRN,
Thai TNIN, Turkish national ids, South African ids, US ITIN, German pension insurance numbers)
and a MAC address recognizer. They
are used as they are: no rule here is hand-written. Chosen are the ones that score a hit at or
above the scan threshold from their format and checksum alone, and that found nothing in the
400 vendored tau-bench runs (7,497 texts); left out, because a ten- or twelve-digit catalogue id
passes their checksum often enough to flood real traffic (319 false hits for UK NHS numbers on
tau-bench item ids): UK NHS, AU Medicare, IN Aadhaar, PL PESEL, SE personnummer, US NPI and US
driver licences (a bare letter and seven digits is also an order id). AU Medicare, IN Aadhaar and
PL PESEL are taken by ``stdnum_ids.py`` behind their cue words.
"""

from __future__ import annotations

import re

from presidio_analyzer import EntityRecognizer, RecognizerResult
from presidio_analyzer import predefined_recognizers as predefined

from golden_distill.redaction.recognizers.base import AnyOf, RecognizerSpec

#: Presidio recognizer classes, by name (the installed Presidio's exports), each with a gate:
#: a cheap pattern every hit of it contains, so a text runs only the recognizers it could feed
#: (sixteen recognizers on every text with digits cost a third of redaction's CPU).
#: Each gate is a superset of the recognizer's own patterns in the installed Presidio (its
#: digit counts and bounds, without its finer ranges): a looser gate (any run of eight digits)
#: let ISO dates and timestamps through to five recognizers on every text that had one.
RECOGNIZERS: dict[str, str] = {
    "UkNinoRecognizer": r"[A-Za-z]{2}\s?\d{2}\s?\d{2}\s?\d{2}",
    "UkDrivingLicenceRecognizer": r"[A-Za-z9]{5}\d{6}",
    "MacAddressRecognizer": r"[0-9A-Fa-f]{2}(?P<mac>[:-])(?:[0-9A-Fa-f]{2}(?P=mac)){4}"
    r"[0-9A-Fa-f]{2}"
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}",  # colon/hyphen and Cisco dot forms
    "ItFiscalCodeRecognizer": r"[A-Za-z]{6}\d{2}[A-Za-z]",
    "EsNifRecognizer": r"\d{8}-?[A-Za-z]",
    "EsNieRecognizer": r"[XYZxyz]-?\d{7}",
    "FiPersonalIdentityCodeRecognizer": r"\d{6}[-+A-Fa-fU-Yu-y]\d{3}[0-9A-Ya-y]",
    "SgFinRecognizer": r"[STFGMstfgm]\d{7}[A-Za-z]",
    "AuTfnRecognizer": r"(?<!\d)\d{3}\s?\d{3}\s?\d{3}(?!\d)",
    "AuAbnRecognizer": r"(?<!\d)\d{2}\s?\d{3}\s?\d{3}\s?\d{3}(?!\d)",
    "InPanRecognizer": r"[A-Za-z]{5}\d{4}[A-Za-z]",
    "KrRrnRecognizer": r"(?<!\d)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-?[1-4]\d{6}(?!\d)",
    "ThTninRecognizer": r"(?<!\d)[1-9]\d{12}(?!\d)",
    "TrNationalIdRecognizer": r"(?<!\d)[1-9]\d{10}(?!\d)",
    "ZaIdNumberRecognizer": r"(?<!\d)\d{10}[0-2][89]\d(?!\d)",
    "UsItinRecognizer": r"9\d{2}[- ]?\d{2}[- ]?\d{4}",
    "DeSocialSecurityRecognizer": r"\d{8}[A-Z]\d{3}",
}


class GatedRecognizer(EntityRecognizer):
    """A Presidio recognizer that runs only on texts its ``gate`` matches (picklable, so
    process workers can receive it)."""

    def __init__(self, inner: EntityRecognizer, gate: str) -> None:
        self.inner = inner
        self.gate = re.compile(gate)
        super().__init__(
            supported_entities=inner.supported_entities,
            name=inner.name,
            supported_language="en",
            context=inner.context,
        )

    def load(self) -> None:
        """Nothing to load: ``inner`` loaded itself when it was made."""

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: object = None
    ) -> list[RecognizerResult]:
        if not self.gate.search(text):
            return []
        results = self.inner.analyze(text, entities, nlp_artifacts)
        for result in results:  # the analyzer keeps results by the registered recognizer's id
            meta = result.recognition_metadata or {}
            meta[RecognizerResult.RECOGNIZER_IDENTIFIER_KEY] = self.id
            meta[RecognizerResult.RECOGNIZER_NAME_KEY] = self.name
            result.recognition_metadata = meta
        return results


def build() -> list[EntityRecognizer]:
    """One gated instance of each, registered for the analyzer's language: an Italian fiscal
    code in an English conversation is still a fiscal code (Presidio files some under "it")."""
    return [
        GatedRecognizer(getattr(predefined, name)(supported_language="en"), gate)
        for name, gate in RECOGNIZERS.items()
    ]


ENTITIES: tuple[str, ...] = tuple(dict.fromkeys(e for r in build() for e in r.supported_entities))

#: The pre-filter: every gate above but the MAC's, rewritten to start at a digit (the letters
#: before it as look-behinds), behind one ``(?=\d)``: a position without a digit then fails at
#: once instead of trying sixteen alternatives (a third of all pre-filter time before). Tests
#: hold it equal to the union of the gates.
_DIGIT_LED = (
    r"(?<=[A-Za-z]{2})\d{2}\s?\d{2}\s?\d{2}", r"(?<=[A-Za-z]{2}\s)\d{2}\s?\d{2}\s?\d{2}",
    r"(?<=[A-Za-z9]{5})\d{6}",
    r"(?<=[A-Za-z]{6})\d{2}[A-Za-z]",
    r"\d{8}-?[A-Za-z]",
    r"(?<=[XYZxyz])\d{7}", r"(?<=[XYZxyz]-)\d{7}",
    RECOGNIZERS["FiPersonalIdentityCodeRecognizer"],
    r"(?<=[STFGMstfgm])\d{7}[A-Za-z]",
    RECOGNIZERS["AuTfnRecognizer"],
    RECOGNIZERS["AuAbnRecognizer"],
    r"(?<=[A-Za-z]{5})\d{4}[A-Za-z]",
    RECOGNIZERS["KrRrnRecognizer"],
    RECOGNIZERS["ThTninRecognizer"],
    RECOGNIZERS["TrNationalIdRecognizer"],
    RECOGNIZERS["ZaIdNumberRecognizer"],
    RECOGNIZERS["UsItinRecognizer"],
    RECOGNIZERS["DeSocialSecurityRecognizer"],
)  # fmt: skip
PREFILTER = AnyOf(
    re.compile(r"(?=\d)(?:" + "|".join(f"(?:{g})" for g in _DIGIT_LED) + ")"),
    re.compile(RECOGNIZERS["MacAddressRecognizer"]),
)

SPEC = RecognizerSpec(
    name="national_ids",
    entities=ENTITIES,
    prefilter=PREFILTER,
    build=lambda cfg: build(),  # type: ignore[arg-type,return-value]
)
