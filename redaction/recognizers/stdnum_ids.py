"""National ids whose check digits python-stdnum validates: one table, one candidate regex per
written form, the maintained library's ``is_valid`` as the gate.

The checking is python-stdnum's (maintained, pure Python, one module per national scheme with
its published check-digit algorithm): French NIR (mod 97), German Steuer-ID (ISO 7064 mod
11,10), Dutch BSN (11-proef), Indian Aadhaar (Verhoeff), Brazilian CPF (two mod-11 digits),
Canadian SIN (Luhn), Japanese My Number (mod 11), Mexican CURP (its check character and date),
Polish PESEL (weighted mod 10). Australian Medicare is not in stdnum; Presidio's own
``AuMedicareRecognizer.validate_result`` (its published weights) checks it.

Policy, so precision holds: a form distinctive enough on its own (CPF with its dots and dash, a
CURP, NIR in its spaced groups, Aadhaar in 4-4-4 groups starting at 2-9) is taken wherever its
check passes; a plain run of digits (nine to fifteen digits pass a one-in-ten or one-in-eleven
check often enough on order ids, see ``national_ids.py``) only when the text holds one of the
scheme's cue words (a CSV header counts: the cue gates the whole text).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from presidio_analyzer.predefined_recognizers import AuMedicareRecognizer
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.de import idnr
from stdnum.fr import nir
from stdnum.in_ import aadhaar
from stdnum.jp import in_ as my_number
from stdnum.mx import curp
from stdnum.nl import bsn
from stdnum.pl import pesel

from golden_distill.redaction.recognizers.base import (
    AnyOf,
    CuedPattern,
    DigitKeywords,
    RecognizerSpec,
)
from golden_distill.redaction.recognizers.pattern_table import PatternTable

_B = r"(?<![A-Za-z0-9])"  # no letter or digit before
_E = r"(?![A-Za-z0-9])"  # nor after
_S = r"[ .\-]?"  # one optional separator between groups


@dataclass(frozen=True, slots=True)
class valid:
    """A check: ``module.is_valid`` of python-stdnum over the hit, upper-cased (a class, so
    tables pickle)."""

    module: str

    def __call__(self, text: str) -> bool:
        return bool(_VALIDATORS[self.module](text.upper()))


def _medicare_ok(text: str) -> bool:
    return bool(AuMedicareRecognizer().validate_result(re.sub(r"\D", "", text)))


_VALIDATORS: dict[str, Callable[[str], object]] = {
    "fr.nir": nir.is_valid,
    "de.idnr": idnr.is_valid,
    "nl.bsn": bsn.is_valid,
    "in_.aadhaar": aadhaar.is_valid,
    "br.cpf": cpf.is_valid,
    "ca.sin": sin.is_valid,
    "jp.in_": my_number.is_valid,
    "mx.curp": curp.is_valid,
    "pl.pesel": pesel.is_valid,
    "au.medicare": _medicare_ok,
}

#: Cue words per scheme (lower case; any case in the text): its names in its own language and in
#: English.
CUES: dict[str, tuple[str, ...]] = {
    "fr.nir": ("nir", "sécurité sociale", "securite sociale", "numéro de sécu", "insee",
               "carte vitale", "social security"),
    "de.idnr": ("steuer-id", "steuerid", "steuer id", "steueridentifikationsnummer",
                "identifikationsnummer", "idnr", "steuernummer", "tax id"),
    "nl.bsn": ("bsn", "burgerservicenummer", "sofinummer", "sofi-nummer"),
    "in_.aadhaar": ("aadhaar", "aadhar", "uidai", "आधार"),
    "br.cpf": ("cpf", "cadastro de pessoas"),
    "ca.sin": ("social insurance", "sin:", "sin ", "sin#", "sin no", "nas:", "nas ",
               "assurance sociale"),
    "jp.in_": ("my number", "mynumber", "my-number", "マイナンバー", "個人番号"),
    "mx.curp": ("curp",),
    "pl.pesel": ("pesel",),
    "au.medicare": ("medicare",),
}  # fmt: skip

_ENTITIES = {
    "fr.nir": "FR_NIR",
    "de.idnr": "DE_TAX_ID",
    "nl.bsn": "NL_BSN",
    "in_.aadhaar": "IN_AADHAAR",
    "br.cpf": "BR_CPF",
    "ca.sin": "CA_SIN",
    "jp.in_": "JP_MY_NUMBER",
    "mx.curp": "MX_CURP",
    "pl.pesel": "PL_PESEL",
    "au.medicare": "AU_MEDICARE",
}

#: (scheme, form name, candidate regex, needs a cue)
_FORMS: tuple[tuple[str, str, str, bool], ...] = (
    ("fr.nir", "spaced",
     rf"{_B}[12] \d{{2}} \d{{2}} (?:\d{{2}}|2[ABab]) \d{{3}} \d{{3}} \d{{2}}{_E}", False),
    ("fr.nir", "any", rf"{_B}[12]{_S}\d{{2}}{_S}\d{{2}}{_S}(?:\d{{2}}|2[ABab]){_S}\d{{3}}{_S}"
     rf"\d{{3}}{_S}\d{{2}}{_E}", True),
    ("de.idnr", "any", rf"{_B}\d{{2}}{_S}\d{{3}}{_S}\d{{3}}{_S}\d{{3}}{_E}", True),
    ("nl.bsn", "any", rf"{_B}\d{{3}}{_S}\d{{3}}{_S}\d{{3}}{_E}", True),
    ("in_.aadhaar", "grouped", rf"{_B}[2-9]\d{{3}} \d{{4}} \d{{4}}{_E}", False),
    ("in_.aadhaar", "any", rf"{_B}[2-9]\d{{3}}{_S}\d{{4}}{_S}\d{{4}}{_E}", True),
    ("br.cpf", "dotted", rf"{_B}\d{{3}}\.\d{{3}}\.\d{{3}}-\d{{2}}{_E}", False),
    ("br.cpf", "any", rf"{_B}\d{{3}}{_S}\d{{3}}{_S}\d{{3}}{_S}\d{{2}}{_E}", True),
    ("ca.sin", "any", rf"{_B}\d{{3}}{_S}\d{{3}}{_S}\d{{3}}{_E}", True),
    ("jp.in_", "any", rf"{_B}\d{{4}}{_S}\d{{4}}{_S}\d{{4}}{_E}", True),
    ("mx.curp", "any", rf"{_B}[A-Za-z]{{4}}\d{{6}}[HMXhmx][A-Za-z]{{5}}[0-9A-Za-z]\d{_E}", False),
    ("pl.pesel", "any", rf"{_B}\d{{11}}{_E}", True),
    ("au.medicare", "any", rf"{_B}[2-6]\d{{3}}{_S}\d{{5}}{_S}\d(?:[ /\-]?[1-9])?{_E}", True),
)  # fmt: skip


def _medicare_card(text: str) -> bool:
    """The first ten digits of a Medicare number (an issue number may follow)."""
    digits = re.sub(r"\D", "", text)[:10]
    return len(digits) == 10 and _medicare_ok(digits)


def rows() -> list[CuedPattern]:
    out = []
    for scheme, form, pattern, cued in _FORMS:
        check = _medicare_card if scheme == "au.medicare" else valid(scheme)
        out.append(
            CuedPattern(
                f"{scheme}_{form}",
                pattern,
                0.85 if not cued else 0.7,
                _ENTITIES[scheme],
                check,
                CUES[scheme] if cued else (),
            )
        )
    return out


ROWS = rows()

SPEC = RecognizerSpec(
    name="stdnum_ids",
    entities=tuple(dict.fromkeys(_ENTITIES.values())),
    # every form holds digits: a cue word in a text with a digit, or a cue-free form's shape
    prefilter=AnyOf(
        DigitKeywords(*(w for words in CUES.values() for w in words)),
        re.compile(
            r"\d{3}\.\d{3}\.\d{3}-\d{2}|[12] \d{2} \d{2} |[2-9]\d{3} \d{4} \d{4}"
            r"|[A-Za-z]{4}\d{6}[HMXhmx]"
        ),
    ),
    build=lambda cfg: PatternTable("StdnumIdsRecognizer", ROWS),
)
