"""A decoding layer: digits spelled out as words ("four one five five five five zero one seven
seven", "zero sette due...", "double five") become the digits they say, so the phone, card and
account recognizers see the number.

Digit words of English, Spanish, French, German, Italian and Portuguese (and "oh" for zero,
"double"/"triple" for repeats) are taken only in a run of seven or more digits with at least
three words in it: a sentence never counts seven digit words in a row by accident. Written
here: no maintained package turns spelled digit runs inside free text back into digits
(``word2number`` and the like parse one number phrase, "four hundred and two", not a run).
"""

from __future__ import annotations

import re

import ahocorasick

from golden_distill.redaction.text_map import Builder, Mapping

_WORDS: dict[str, str] = {}
for _digit, _names in enumerate(
    (
        "zero oh nought cero zéro zero null",
        "one uno un eins um",
        "two dos deux zwei due dois",
        "three tres trois drei tre três",
        "four cuatro quatre vier quattro quatro",
        "five cinco cinq fünf funf cinque",
        "six seis sechs sei",
        "seven siete sept sieben sette sete",
        "eight ocho huit acht otto oito",
        "nine nueve neuf neun nove",
    )
):
    for _name in _names.split():
        _WORDS[_name] = str(_digit)
_REPEAT = {"double": 2, "triple": 3}

_WORD = "|".join(sorted(_WORDS, key=len, reverse=True))
_TOKEN = rf"(?:(?:double|triple)[ -]+(?:{_WORD}|\d)|{_WORD}|\d)"
_SEP = r"[ \t,.\-/]{1,3}"
#: a run of seven or more spelled or written digits, whole words only
_RUN = re.compile(rf"(?i)(?<![\w]){_TOKEN}(?:{_SEP}{_TOKEN}){{6,}}(?![\w])")
_PIECE = re.compile(rf"(?i)(double|triple)[ -]+({_WORD}|\d)|({_WORD})|(\d)")
#: three digit words in a row (lower case or capitalised first)
_CUE = re.compile(rf"(?i)(?<![\w]){_TOKEN}{_SEP}{_TOKEN}{_SEP}{_TOKEN}(?![\w])")
#: the cheap check before it: digit words found by one Aho-Corasick pass over folded text
_AUTOMATON = ahocorasick.Automaton()
for _name in (*_WORDS, *_REPEAT):
    _AUTOMATON.add_word(_name, len(_name))
_AUTOMATON.make_automaton()
MIN_WORDS = 3
MIN_DIGITS = 7


def present(text: str) -> bool:
    """Whether ``text`` may hold a spelled run: three whole digit words, then the regex."""
    low = text.lower()
    words = 0
    for end, length in _AUTOMATON.iter(low):
        start = end + 1 - length
        if (start == 0 or not low[start - 1].isalpha()) and (
            end + 1 == len(low) or not low[end + 1].isalpha()
        ):
            words += 1
            if words >= MIN_WORDS:
                return _CUE.search(text) is not None
    return False


def _digits(run: str) -> str | None:
    out: list[str] = []
    words = 0
    for m in _PIECE.finditer(run):
        repeat, what, word, digit = m.groups()
        if repeat:
            words += 2
            d = _WORDS.get(what.lower(), what)
            out.append(d * _REPEAT[repeat.lower()])
        elif word:
            words += 1
            out.append(_WORDS[word.lower()])
        else:
            out.append(digit)
    text = "".join(out)
    return text if words >= MIN_WORDS and len(text) >= MIN_DIGITS else None


def apply(text: str) -> tuple[str, Mapping]:
    """Each spelled run replaced by its digits, mapped back to the whole run."""
    b = Builder()
    cursor = 0
    for m in _RUN.finditer(text):
        digits = _digits(m.group(0))
        if digits is None:
            continue
        b.add(text[cursor : m.start()], cursor, m.start(), True)
        b.add(digits, m.start(), m.end(), False)
        cursor = m.end()
    b.add(text[cursor:], cursor, len(text), True)
    return b.done()
