"""The word lists the bare-name recognizer looks tokens up in, from maintained packages.

* **Given names and surnames**: Faker's bundled person providers (MIT), every locale whose names
  are written in Latin letters (about 19,500 given names, 16,000 surnames, lower-cased). No
  download: the lists ship inside the package the pipeline already depends on.
* **English vocabulary**: the lower-case entries of the ``web2`` list of ``english-words`` (MIT,
  about 210,000 words). Only entries written in lower case count, so proper nouns of the
  dictionary ("Mary") are not words while "grace", "will", "price" are. A token also counts as
  a word when a plural or -ed/-ing ending stripped off leaves one ("adjustments", "kettles"),
  or when it ends in a lower-case word of 5+ letters after a hyphen ("Home-compatible").

Loaded once per process on first use (about 0.3 s, ~20 MB) and never pickled: recognizers are
shipped to worker processes and look the lists up through :func:`lexicon`.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from functools import cache

#: A name as the lists spell it: Latin letters, one optional hyphen.
_LATIN_NAME = re.compile(r"[A-Z][a-zß-öø-ÿ]+(?:-[A-Z][a-zß-öø-ÿ]+)?")
_ENDINGS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))


@dataclass(frozen=True, slots=True)
class Lexicon:
    given: frozenset[str]
    surnames: frozenset[str]
    words: frozenset[str]

    def is_given(self, token: str) -> bool:
        low = token.lower()
        return low in self.given or low.split("-", 1)[0] in self.given

    def is_surname(self, token: str) -> bool:
        low = token.lower()
        return low in self.surnames or all(p in self.surnames for p in low.split("-"))

    def is_word(self, token: str) -> bool:
        """An ordinary English word (or an inflection of one), in any case."""
        low = token.lower()
        if low in self.words:
            return True
        tail = token.partition("-")[2]
        if tail[:1].islower() and len(tail) >= 5 and self.is_word(tail):
            return True  # "Assistant-compatible": a compound adjective, not a surname
        for ending, stem_end in _ENDINGS:
            stem = low[: -len(ending)]
            if low.endswith(ending) and len(stem) >= 3 and stem + stem_end in self.words:
                return True
        return False


def _names(value: object) -> set[str]:
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return {v.lower() for v in value if isinstance(v, str) and _LATIN_NAME.fullmatch(v)}
    return set()


def _faker_names() -> tuple[set[str], set[str]]:
    # local: Faker's locale modules are many; only a process that scans text needs them
    import faker.providers.person as person

    given: set[str] = set()
    surnames: set[str] = set()
    for module in pkgutil.iter_modules(person.__path__):
        try:
            provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        except (ImportError, AttributeError):
            continue
        attrs = vars(provider)
        for attr in ("first_names", "first_names_male", "first_names_female"):
            given |= _names(attrs.get(attr))
        surnames |= _names(attrs.get("last_names"))
    return given, surnames


def _english_words() -> set[str]:
    from english_words import get_english_words_set  # local: a 200k-word pickle, see _faker_names

    return {w for w in get_english_words_set(["web2"], lower=False, alpha=True) if w.islower()}


@cache
def lexicon() -> Lexicon:
    """The lists, loaded once per process."""
    given, surnames = _faker_names()
    return Lexicon(frozenset(given), frozenset(surnames), frozenset(_english_words()))
