"""What every recognizer file declares: its entity types, a cheap pre-filter, and a builder.

The pre-filter is the speed trick: Presidio runs every requested recognizer over every string,
and the phone recognizer alone costs a full ``phonenumbers`` pass per region. A recognizer is
only asked about a string its pre-filter (one C-level regex search) says could hold a hit, so
most strings of a run (statuses, product names, short replies) never reach Presidio at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import ahocorasick
import regex
from presidio_analyzer import EntityRecognizer

if TYPE_CHECKING:
    from golden_distill.redaction.config import RedactionConfig

#: Boundaries that work next to Chinese characters: ``\b`` does not, because CJK characters are
#: word characters, so "手机13812345678" has no word boundary before the digits.
NO_DIGIT_BEFORE = r"(?<![0-9])"
NO_DIGIT_AFTER = r"(?![0-9])"
NO_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
NO_ALNUM_AFTER = r"(?![A-Za-z0-9])"

#: Flags for our own patterns: case matters (``AKIA``), dots match newlines (PEM blocks).
CASE_SENSITIVE = regex.DOTALL | regex.MULTILINE


#: After ``casefold``, what case-insensitive regexes (``re`` and ``regex``) also take for "i":
#: dotless ı, and the dot that İ folds to ("i" + U+0307).
_FOLD_MORE = {0x131: "i", 0x307: None}


def fold_case(text: str) -> str:
    """``text`` folded so that a keyword pre-filter (lower-case words) finds every place a
    case-insensitive pattern could match: casefold covers ſ and the Kelvin sign K; dotless ı and
    İ are mapped to "i" as well (folding more than the patterns do only lets more texts in)."""
    folded = text.casefold()
    return folded if folded.isascii() else folded.translate(_FOLD_MORE)


class Keywords:
    """A pre-filter made of keywords, matched case-insensitively by one Aho-Corasick pass over
    the folded text (``fold_case``): much cheaper than a case-insensitive regex alternation."""

    def __init__(self, *words: str) -> None:
        self.words = tuple(w.lower() for w in words)
        self._automaton = ahocorasick.Automaton()
        for word in self.words:
            self._automaton.add_word(word, word)
        self._automaton.make_automaton()

    def search(self, text: str) -> bool:
        return self.search_lower(fold_case(text))

    def search_lower(self, low: str) -> bool:
        """``search`` for text the caller already folded (``fold_case``)."""
        return next(self._automaton.iter(low), None) is not None

    def __reduce__(self) -> tuple[type[Keywords], tuple[str, ...]]:
        return (Keywords, self.words)


class DigitKeywords(Keywords):
    """Keywords in a text that also holds a digit: the pre-filter of recognizers that find a
    number after a cue word. The analyzer checks it only on texts with a digit
    (``prefilter_digits.needs_digit`` reads ``requires_digit``), so there it costs one keyword
    pass."""

    requires_digit = True

    def search(self, text: str) -> bool:
        return any(ch.isdecimal() for ch in text) and super().search(text)

    def __reduce__(self) -> tuple[type[DigitKeywords], tuple[str, ...]]:  # type: ignore[override]
        return (DigitKeywords, self.words)


class AnyOf:
    """A pre-filter that hits when any of its parts does: regexes, ``Keywords`` and literal
    substrings. Case-insensitive words as ``Keywords`` instead of a ``(?i:...)`` alternation
    in one regex (which Python tries at every position of the text) cost a quarter."""

    def __init__(self, *parts: re.Pattern[str] | Keywords | str) -> None:
        self.parts = parts

    def search(self, text: str) -> bool:
        folded: str | None = None
        for part in self.parts:
            if isinstance(part, str):
                hit: object = part in text
            elif isinstance(part, Keywords):
                folded = fold_case(text) if folded is None else folded
                hit = part.search_lower(folded)
            else:
                hit = part.search(text)
            if hit:
                return True
        return False

    def __reduce__(self) -> tuple[type[AnyOf], tuple[re.Pattern[str] | Keywords | str, ...]]:
        return (AnyOf, self.parts)


class Guarded:
    """A pre-filter part: a regex tried only on texts holding ``literal`` (a C-speed substring
    test first: most texts have no ``@`` or quote, and a regex with a look-behind or a
    case-insensitive alternation is tried at every position of the text)."""

    def __init__(self, literal: str, pattern: re.Pattern[str]) -> None:
        self.literal = literal
        self.pattern = pattern

    def search(self, text: str) -> bool:
        return self.literal in text and self.pattern.search(text) is not None

    def __reduce__(self) -> tuple[type[Guarded], tuple[str, re.Pattern[str]]]:
        return (Guarded, (self.literal, self.pattern))


@dataclass(frozen=True, slots=True)
class RecognizerSpec:
    name: str
    entities: tuple[str, ...]
    prefilter: re.Pattern[str] | Keywords | AnyOf  # anything with .search(text) -> truthy
    build: Callable[[RedactionConfig], EntityRecognizer]


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum used by payment cards."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


@dataclass(frozen=True, slots=True)
class CuedPattern:
    """One row of a ``PatternTable``: a regex, its score, the entity type a hit is, an
    optional check a hit must pass (a checksum, a digit count) and optional cue words: the row
    runs only on texts holding one of them (case-insensitive; a superset of what its regex's
    cue part matches), so a text with a phone word is not searched for birth dates too."""

    name: str
    regex: str
    score: float
    entity: str
    check: Callable[[str], bool] | None = None
    cues: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class digit_count:
    """A check: the hit holds ``low`` to ``high`` digits (a class, so tables pickle)."""

    low: int
    high: int

    def __call__(self, text: str) -> bool:
        return self.low <= sum(c.isdigit() for c in text) <= self.high
