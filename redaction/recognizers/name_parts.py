"""When part of a name is found, the adjacent parts of the same name go with it.

A key rule knows the surname ("Núñez") and a recognizer may find only the part it could read
("Ángel Núñez"): replacing that alone leaves "José Ángel <PERSON_…>" behind, still naming
the person. A found name is widened over the capitalised words right beside it (one space or
tab between, at most two each side) that are name parts: a known given name or surname
(``name_lexicon.py``), or a capitalised word with letters beyond ASCII ("Ángel", "Dvořák");
titles and greetings ("Dear", "Herr", "Señora") and ordinary words
("Water", "Customer") never join.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from golden_distill.redaction.recognizers.name_lexicon import lexicon

_MAX_EXTRA = 2
_JOINERS = "'’-"
_JOINER = re.compile("['’-]")
#: Titles, greetings and roles written before or after a name, in the major languages.
_NOT_PARTS = frozenset(
    {"dear", "hi", "hello", "hey", "thanks", "thank", "mr", "mrs", "ms", "miss", "dr", "sir",
     "madam", "prof", "herr", "frau", "liebe", "lieber", "pane", "paní", "pan", "pani", "vážený",
     "vážená", "señor", "señora", "sr", "sra", "don", "doña", "estimado", "estimada", "senhor",
     "senhora", "signor", "signora", "monsieur", "madame", "mme", "mlle", "cher", "chère",
     "customer", "passenger", "agent", "user", "client", "kunde", "kundin", "cliente", "team",
     "the", "and", "or", "von", "van", "de"}
)  # fmt: skip


def _is_part(word: str) -> bool:
    if len(word) < 2 or not word[0].isupper() or word.lower() in _NOT_PARTS:
        return False
    pieces = _JOINER.split(word)
    for i, piece in enumerate(pieces):
        if len(piece) < 2 and not (i == 0 and i + 1 < len(pieces) and pieces[1][:1].isupper()):
            return False  # "I’m", "e-" (but "O'Brien", "D’Angelo")
    rest = "".join(pieces)[1:]
    if not all(c.isalpha() and not c.isupper() for c in rest if c.isalpha()):
        return False  # "USA", "iPhone"-like shapes are no name parts
    lex = lexicon()
    if lex.is_given(word) or lex.is_surname(word):
        return True
    # beyond ASCII: the word lists hold few such names, and English words are ASCII; an ASCII
    # word the lists do not know ("Seattle") is not taken on the strength of its case alone
    beyond = any(c.isalpha() and not c.isascii() for c in word)
    return beyond and not lex.is_word(word)


def _word_before(text: str, start: int) -> tuple[int, str] | None:
    if start < 2 or text[start - 1] not in " \t" or text[start - 2] in " \t":
        return None
    end = start - 1
    i = end
    while i > 0 and (text[i - 1].isalpha() or text[i - 1] in _JOINERS or _mark(text[i - 1])):
        i -= 1
    word = text[i:end]
    return (i, word) if word else None


def _word_after(text: str, end: int) -> tuple[int, str] | None:
    if end + 1 >= len(text) or text[end] not in " \t" or text[end + 1] in " \t":
        return None
    i = begin = end + 1
    while i < len(text) and (text[i].isalpha() or text[i] in _JOINERS or _mark(text[i])):
        i += 1
    word = text[begin:i].rstrip(_JOINERS)
    if not word or (begin + len(word) < len(text) and text[begin + len(word)].isdigit()):
        return None
    return begin + len(word), word


def _mark(ch: str) -> bool:
    return "\u0300" <= ch <= "\u036f"


def widen(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` widened over the name parts right beside it."""
    for _ in range(_MAX_EXTRA):
        before = _word_before(text, start)
        if before is None or not _is_part(before[1]):
            break
        start = before[0]
    for _ in range(_MAX_EXTRA):
        after = _word_after(text, end)
        if after is None or not _is_part(after[1]):
            break
        end = after[0]
    return start, end


def widened_names(names: Iterable[str], texts: Iterable[str]) -> set[str]:
    """Every longer name the known ``names`` are part of in ``texts``: "José Ángel Núñez"
    where only "Núñez" is known. The texts are searched as one (joined by newlines, which no
    widening crosses): one ``find`` loop per name instead of one per name and text."""
    found: set[str] = set()
    names = [n for n in names if len(n) >= 2]
    if not names:
        return found
    text = "\n".join(t for t in texts if " " in t or "\t" in t)
    for name in names:
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            bounded = (at == 0 or not text[at - 1].isalnum()) and (
                end == len(text) or not text[end].isalnum()
            )
            if bounded:
                lo, hi = widen(text, at, end)
                if (lo, hi) != (at, end):
                    found.add(text[lo:hi])
            at = text.find(name, end)
    return found
