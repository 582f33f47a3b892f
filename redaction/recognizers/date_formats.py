"""Calendar dates as people write them, and a keyed stand-in that is still a valid date.

Used twice: the cued date-of-birth row (``cued_numbers.py``) finds a date written in prose in
several languages ("3rd of March 1986", "14.07.1979", "17 de agosto de 1971", "14. Juli 1979",
"1984年5月6日"), and ``pseudonym.value_token`` replaces a personal date by another real date in
the same layout (a replayed validator that parses the date still accepts it). Written here:
``dateparser`` reads such dates but cannot say where one starts and ends in a sentence, nor
write one back in the layout it came in.
"""

from __future__ import annotations

import hashlib
import hmac
import re

#: Month names per language (index = month - 1); abbreviations are the first three letters.
MONTHS: dict[str, tuple[str, ...]] = {
    "en": ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december"),
    "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
           "septiembre", "octubre", "noviembre", "diciembre"),
    "pt": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
           "setembro", "outubro", "novembro", "dezembro"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
           "septembre", "octobre", "novembre", "décembre"),
    "de": ("januar", "februar", "märz", "april", "mai", "juni", "juli", "august",
           "september", "oktober", "november", "dezember"),
    "it": ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
           "settembre", "ottobre", "novembre", "dicembre"),
    "nl": ("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus",
           "september", "oktober", "november", "december"),
}  # fmt: skip
_ENGLISH_SHORT = (*(m[:3] for m in MONTHS["en"]), "sept")
_NAMES = sorted({n for names in MONTHS.values() for n in names} | set(_ENGLISH_SHORT), key=len)
_MONTH_NAMES = frozenset(_NAMES)
MONTH = "(?:" + "|".join(re.escape(n) for n in reversed(_NAMES)) + r")\.?"
_ORD = r"(?:st|nd|rd|th|er|º|°)?"
_SEP = r"(?:\s+de\s+|\s+of\s+|\.?\s+|,\s*)"

#: A calendar date: numeric (day/month order either way, ISO, dotted), a month name in one of
#: the languages above with the day before or after it, or a CJK 年月日 date. Case-insensitive.
DATE = (
    r"(?i:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})(?![0-9])"
    rf"|\d{{1,2}}{_ORD}{_SEP}{MONTH}{_SEP}\d{{4}}"
    rf"|{MONTH}\s+\d{{1,2}}{_ORD},?\s+\d{{4}}"
    rf"|\d{{1,2}}[-/ ]{MONTH}[-/ ](?:\d{{4}}|\d{{2}})(?![0-9])"
    r"|\d{4}\s?年\s?\d{1,2}\s?月\s?\d{1,2}\s?日)"
)
_DATE_RE = re.compile(DATE)
_TOKEN = re.compile(r"\d+|[^\W\d_]+")
_SUFFIXES = {"st", "nd", "rd", "th", "er"}


def _ordinal(day: int) -> str:
    if 10 < day % 100 < 14:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _month_word(original: str, month: int) -> str | None:
    low = original.lower().rstrip(".")
    for names in MONTHS.values():
        if low in names:
            word = names[month - 1]
            break
    else:
        if low not in _ENGLISH_SHORT:
            return None
        word = MONTHS["en"][month - 1][:3]
    if original.isupper():
        return word.upper()
    return word.capitalize() if original[:1].isupper() else word


def keyed_date(value: str, secret: bytes, domain: str = "date") -> str | None:
    """Another valid date in ``value``'s layout, chosen by HMAC of ``value`` under ``secret``
    (the same value gives the same date everywhere), or None when ``value`` is not one date."""
    if not _DATE_RE.fullmatch(value.strip()):
        return None
    tokens = list(_TOKEN.finditer(value))
    numbers = [t for t in tokens if t.group().isdigit()]
    words = [t for t in tokens if not t.group().isdigit()]
    digest = hmac.new(secret, f"{domain}\x1f{value.casefold()}".encode(), hashlib.sha256).digest()
    year = 1935 + digest[0] % 70
    month = 1 + digest[1] % 12
    names = [t for t in words if t.group().lower() in _MONTH_NAMES]
    if names and len(numbers) == 2:  # a month name, a day and a year
        day = 1 + digest[2] % 28
        year_tok, day_tok = sorted(numbers, key=lambda t: -len(t.group()))
        new_month = _month_word(names[0].group(), month)
        if new_month is None:
            return None
        repl = {year_tok.start(): str(year), day_tok.start(): str(day), names[0].start(): new_month}
        for t in words:  # an ordinal suffix follows the new day
            if t.start() == day_tok.end() and t.group().lower() in _SUFFIXES:
                suffix = _ordinal(day) if t.group().lower() != "er" else ("er" if day == 1 else "")
                repl[t.start()] = suffix.upper() if t.group().isupper() else suffix
    elif len(numbers) == 3 and not names:
        if len(numbers[0].group()) == 4:  # year first: ISO, 年月日
            day = 1 + digest[2] % 28
            order = (year, month, day)
        else:  # day and month in either order: both at most 12 reads right either way
            day = 1 + digest[2] % 12
            month = 1 + digest[1] % 12
            year_text = numbers[2].group()
            order = (day, month, year if len(year_text) == 4 else year % 100)
        repl = {
            t.start(): str(n).zfill(len(t.group())) for t, n in zip(numbers, order, strict=True)
        }
    else:
        return None
    out, cursor = [], 0
    for t in tokens:
        if t.start() in repl:
            out.append(value[cursor : t.start()])
            out.append(repl[t.start()])
            cursor = t.end()
    out.append(value[cursor:])
    new = "".join(out)
    if new.casefold() == value.casefold():
        return keyed_date(value, secret, domain + "'")
    return new
