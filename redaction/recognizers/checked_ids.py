"""Ids whose format carries a check: vehicle identification numbers (ISO 3779 check digit),
IBANs in lower case (mod-97), and card numbers whose groups are split by separators Presidio's
card pattern does not take (dots, middle dots, emoji; Luhn).

Presidio's IBAN recognizer (``iban.py``) takes upper-case IBANs only; a user or a URL often
writes them in lower case ("gb82 west 1234 …", "?iban=de89…"). No maintained recognizer covers
VINs. Both are written here, each hit validated by its check digit.
"""

from __future__ import annotations

import re

from golden_distill.redaction.recognizers.base import CuedPattern, RecognizerSpec, luhn_ok
from golden_distill.redaction.recognizers.pattern_table import PatternTable

_VIN_VALUES = {
    **{str(d): d for d in range(10)},
    **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
    **dict(zip("JKLMN", range(1, 6), strict=True)),
    "P": 7,
    "R": 9,
    **dict(zip("STUVWXYZ", range(2, 10), strict=True)),
}
_VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def vin_ok(text: str) -> bool:
    """ISO 3779 / FMVSS 115 check digit (position 9), letters and digits both present."""
    vin = text.upper()
    if len(vin) != 17 or not any(c.isalpha() for c in vin) or not any(c.isdigit() for c in vin):
        return False
    try:
        total = sum(_VIN_VALUES[c] * w for c, w in zip(vin, _VIN_WEIGHTS, strict=True))
    except KeyError:
        return False
    check = total % 11
    return vin[8] == ("X" if check == 10 else str(check))


def iban_ok(text: str) -> bool:
    """ISO 13616 mod-97 over the compact, upper-cased IBAN."""
    compact = re.sub(r"\s", "", text).upper()
    if not 15 <= len(compact) <= 34 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    moved = compact[4:] + compact[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return int(digits) % 97 == 1


def card_ok(text: str) -> bool:
    """13 to 19 digits passing the Luhn check (separators ignored)."""
    digits = "".join(c for c in text if c.isdigit())
    return 13 <= len(digits) <= 19 and luhn_ok(digits)


#: card groups split by any one separator Presidio's card pattern does not take (".", "·",
#: "•", "/", an emoji with or without spaces around it): 4-4-4-4, Amex 4-6-5, Diners 4-6-4
_CARD_SEP = r"(?:[ .·•/_-]| ?[\U0001F300-\U0001FAFF\u2600-\u27BF]\ufe0f? ?)"

ROWS = [
    CuedPattern("card_any_separator",
                rf"(?<![0-9])\d{{4}}({_CARD_SEP})(?:\d{{4}}\1\d{{4}}\1\d{{4}}|\d{{6}}\1\d{{4,5}})"
                r"(?![0-9])", 0.6, "CREDIT_CARD", card_ok),
    CuedPattern("vin", r"(?<![A-Za-z0-9])[A-HJ-NPR-Za-hj-npr-z0-9]{17}(?![A-Za-z0-9])", 0.6,
                "VIN", vin_ok),
    CuedPattern("iban_any_case",
                r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,4})?"
                r"(?![A-Za-z0-9])", 0.6, "IBAN_CODE", iban_ok),
]  # fmt: skip

SPEC = RecognizerSpec(
    name="checked_ids",
    entities=("VIN", "IBAN_CODE", "CREDIT_CARD"),
    # a VIN's last three characters are digits (its serial number)
    prefilter=re.compile(
        r"[A-Za-z0-9]{14}\d{3}|[A-Za-z]{2}\d{2} ?[A-Za-z0-9]{4}|\d{4}\D{1,4}\d{4}"
    ),
    build=lambda cfg: PatternTable("CheckedIdsRecognizer", ROWS),
)
