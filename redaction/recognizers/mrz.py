"""Passport machine-readable zones (ICAO Doc 9303 part 4, TD3): two lines of 44 characters.

Line 1 is ``P`` + a type character + the issuing state + the holder's name (surname ``<<``
given names, ``<`` between words and as filler): personal as a whole, since the names are.
Line 2 carries the document number, nationality, birth date, sex, expiry date and an optional
personal number, each with its check digit (weights 7, 3, 1 over digits, letters A-Z as 10-35
and ``<`` as 0) and a composite check digit over all of them; a line is taken only when all
five check digits hold, so a 44-character code that merely looks like one stays.
"""

from __future__ import annotations

from golden_distill.redaction.recognizers.base import AnyOf, CuedPattern, RecognizerSpec
from golden_distill.redaction.recognizers.pattern_table import PatternTable

_WEIGHTS = (7, 3, 1)


def check_digit(field: str) -> str:
    """The ICAO 9303 check digit of ``field``."""
    total = 0
    for i, ch in enumerate(field):
        value = 0 if ch == "<" else int(ch, 36)
        total += value * _WEIGHTS[i % 3]
    return str(total % 10)


def line2_ok(line: str) -> bool:
    """All five check digits of a TD3 second line hold (the personal number's may be ``<``
    when the field is empty)."""
    if len(line) != 44:
        return False
    number, dob, expiry, personal = line[0:9], line[13:19], line[21:27], line[28:42]
    if line[9] != check_digit(number) or line[19] != check_digit(dob):
        return False
    if line[27] != check_digit(expiry):
        return False
    if line[42] != check_digit(personal) and not (line[42] == "<" and set(personal) == {"<"}):
        return False
    composite = line[0:10] + line[13:20] + line[21:43]
    return line[43] == check_digit(composite)


def line1_ok(line: str) -> bool:
    """A TD3 first line: a surname and given names (``<<`` between them) after the state (a
    line cut short, 30 to 44 characters, is still one: its names are what matters)."""
    names = line[5:]
    return "<<" in names.rstrip("<") and names[0].isalpha()


ROWS = [
    CuedPattern("mrz_td3_line1", r"(?<![A-Z0-9<])P[A-Z<][A-Z<]{3}[A-Z<]{25,39}(?![A-Z0-9<])", 0.85,
                "PASSPORT", line1_ok),
    CuedPattern("mrz_td3_line2",
                r"(?<![A-Z0-9<])[A-Z0-9<]{9}\d[A-Z<]{3}\d{7}[MFX<]\d{7}[A-Z0-9<]{14}[0-9<]\d"
                r"(?![A-Z0-9<])", 0.85, "PASSPORT", line2_ok),
]  # fmt: skip

SPEC = RecognizerSpec(
    name="mrz",
    entities=("PASSPORT",),
    # both lines hold the filler "<" (a name field or a document number never fills 39 or 14
    # characters exactly in practice; a line without one is not taken)
    prefilter=AnyOf("<"),
    build=lambda cfg: PatternTable("MrzRecognizer", ROWS),
)
