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

import ahocorasick
import regex
from presidio_analyzer import EntityRecognizer

from golden_distill.redaction.config import RedactionConfig

#: Boundaries that work next to Chinese characters: ``\b`` does not, because CJK characters are
#: word characters, so "手机13812345678" has no word boundary before the digits.
NO_DIGIT_BEFORE = r"(?<![0-9])"
NO_DIGIT_AFTER = r"(?![0-9])"
NO_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
NO_ALNUM_AFTER = r"(?![A-Za-z0-9])"

#: Flags for our own patterns: case matters (``AKIA``), dots match newlines (PEM blocks).
CASE_SENSITIVE = regex.DOTALL | regex.MULTILINE


class Keywords:
    """A pre-filter made of keywords, matched case-insensitively by one Aho-Corasick pass over
    the lower-cased text: much cheaper than a case-insensitive regex alternation."""

    def __init__(self, *words: str) -> None:
        self.words = tuple(w.lower() for w in words)
        self._automaton = ahocorasick.Automaton()
        for word in self.words:
            self._automaton.add_word(word, word)
        self._automaton.make_automaton()

    def search(self, text: str) -> bool:
        return self.search_lower(text.lower())

    def search_lower(self, low: str) -> bool:
        """``search`` for text the caller already lower-cased."""
        return next(self._automaton.iter(low), None) is not None

    def __reduce__(self) -> tuple[type[Keywords], tuple[str, ...]]:
        return (Keywords, self.words)


@dataclass(frozen=True, slots=True)
class RecognizerSpec:
    name: str
    entities: tuple[str, ...]
    prefilter: re.Pattern[str] | Keywords  # anything with .search(text) -> truthy
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
