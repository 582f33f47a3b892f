"""Bare person names in free text, without a cue and without an NER model.

"Oswin Fairleigh asked for a refund" has no introduction cue, no key and may be the only place
the name occurs, and no NER model may be downloaded here. This recognizer looks at runs of two
to four capitalised tokens (a middle initial "J." allowed, hyphenated and O'/Mc surnames too)
and decides with word lists from maintained packages (``name_lexicon.py``):

* **given name led** (score 0.6): a token that is a known given name, followed by a surname-like
  token, is a name unless both are ordinary English words and the second is not a known surname
  ("Grace Period", "Price Difference" are not; "Grace Hill", "Will Smith", "Oswin Fairleigh",
  "Mary Fairleigh-Moss" are). A further unknown or surname token joins the name.
* **all unknown** (score 0.4): two or three tokens none of which is an English word ("Tamsin
  Quarrie", "Wei Zhang"), after leading and trailing ordinary words are trimmed (a sentence
  start: "Yesterday Tamsin Quarrie asked").

Runs right after a house number (an address: the address recognizer's) and runs ending in a
company suffix ("Bradley Ltd", "Mills Inc") are not names. Names in lower or upper case are
left to the cue-led recognizer (``introduced_name``); so are runs ending in a place word
("Wayne County", "... Airport").

Cost: the pre-filter *is* the detector, so Presidio is only asked about texts that hold a bare
name. It is a literal-first regex gate (" [A-Z]": a space before a capital), the run matched
only where the gate hits, then set lookups per capitalised run.
"""

from __future__ import annotations

import re
from typing import Any

from presidio_analyzer import EntityRecognizer, RecognizerResult

from golden_distill.redaction.recognizers.base import RecognizerSpec
from golden_distill.redaction.recognizers.name_lexicon import Lexicon, lexicon

#: Lower-case letters: ASCII, Latin-1 and Latin Extended-A (Czech, Polish, Turkish...: "Dvořák").
_LOWER = "a-zß-öø-ÿ\u0100-\u017f"
_LOWER_CHARS = "".join(
    chr(c) for c in (*range(0xDF, 0xF7), *range(0xF8, 0x100), *range(0x100, 0x180))
)
#: Capitals a name may start with: ASCII, Latin-1 ("Ángel", "Ödön") and Extended-A ("Šárka").
_UPPER = "A-ZÀ-ÖØ-Þ\u0100-\u017f"
_UPPER_CHARS = "".join(chr(c) for c in (*range(0xC0, 0xD7), *range(0xD8, 0xDF)))
_TOKEN = rf"[{_UPPER}](?:'[A-Z])?[{_LOWER}]+(?:[A-Z][{_LOWER}]+)?(?:-[A-Za-z][{_LOWER}]+)?"
_INITIAL = r"[A-Z]\."
#: A run of capitalised tokens, matched where a gate hit says one may start.
_RUN = re.compile(rf"{_TOKEN}(?:[ \t](?:{_INITIAL}[ \t])?{_TOKEN})+(?![A-Za-z0-9_])")
#: The cheap gate: every run has a space before its second token. A literal-first pattern is
#: ten times faster than a search for the run itself (which starts with a character class).
_GATE = re.compile(rf" [{_UPPER}]")
_TOKEN_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'-" + _LOWER_CHARS + _UPPER_CHARS
)
_NOT_BEFORE = frozenset("0123456789_’")
_PART = re.compile(rf"{_INITIAL}|{_TOKEN}")
_HOUSE_NUMBER = re.compile(r"\d[A-Za-z]?,?[ \t]$")
#: Company suffixes (Faker's own, and the usual others): "Bradley Ltd" is no person.
_ORG = frozenset(
    {"inc", "llc", "ltd", "plc", "group", "corp", "co", "company", "sons", "gmbh"}
    | {"county", "airport", "international", "university", "college", "hospital", "hotel"}
)
GIVEN_LED_SCORE = 0.6
ALL_UNKNOWN_SCORE = 0.4
_MAX_NAME_TOKENS = 3

Token = tuple[str, int, int]  # text, start, end


def _is_initial(token: Token) -> bool:
    return token[0].endswith(".")


def _given_led(tokens: list[Token], lex: Lexicon) -> list[tuple[int, int]]:
    """(first, last) token index pairs of names that start with a known given name."""
    found: list[tuple[int, int]] = []
    n = len(tokens)
    i = 0
    while i < n - 1:
        first = tokens[i][0]
        if _is_initial(tokens[i]) or not lex.is_given(first):
            i += 1
            continue
        nxt = tokens[i + 1][0]
        if i + 2 < n and lex.is_word(first) and lex.is_given(nxt) and not lex.is_word(nxt):
            i += 1  # "Will Oswin Fairleigh": the name starts at Oswin
            continue
        j = i + 1
        if _is_initial(tokens[j]):
            if j + 1 >= n:
                break
            j += 1
        last = tokens[j][0]
        if lex.is_word(first) and lex.is_word(last) and not lex.is_surname(last):
            i += 1
            continue
        words = sum(not _is_initial(t) for t in tokens[i : j + 1])
        while j + 1 < n and words < _MAX_NAME_TOKENS and not _is_initial(tokens[j + 1]):
            more = tokens[j + 1][0]
            if lex.is_word(more) and not lex.is_surname(more):
                break
            j += 1
            words += 1
        after = tokens[j + 1][0].lower() if j + 1 < n else ""
        if tokens[j][0].lower() not in _ORG and after not in _ORG:
            found.append((i, j))  # not "John F. Kennedy International Airport"
        i = j + 1
    return found


def _all_unknown(tokens: list[Token], lex: Lexicon) -> tuple[int, int] | None:
    """The run of 2-3 tokens, none an English word, left after trimming ordinary words."""
    lo, hi = 0, len(tokens) - 1
    while lo <= hi and (_is_initial(tokens[lo]) or lex.is_word(tokens[lo][0])):
        lo += 1
    while hi >= lo and (_is_initial(tokens[hi]) or lex.is_word(tokens[hi][0])):
        hi -= 1
    core = tokens[lo : hi + 1]
    names = [t for t in core if not _is_initial(t)]
    if not 2 <= len(names) <= _MAX_NAME_TOKENS:
        return None
    after = tokens[hi + 1][0].lower() if hi + 1 < len(tokens) else ""
    if any(lex.is_word(t[0]) for t in names) or core[-1][0].lower() in _ORG or after in _ORG:
        return None
    return lo, hi


def _runs(text: str) -> list[re.Match[str]]:
    """Runs of capitalised tokens: gate hits, each extended back to its word's start."""
    runs: list[re.Match[str]] = []
    done = 0
    for g in _GATE.finditer(text):
        j = g.start()
        if j < done:
            continue
        while j > 0 and text[j - 1] in _TOKEN_CHARS:
            j -= 1
        if j > 0 and text[j - 1] in _NOT_BEFORE:
            continue
        m = _RUN.match(text, j)
        if m is not None:
            runs.append(m)
            done = m.end()
    return runs


def find_bare_names(text: str) -> list[tuple[int, int, float]]:
    """``(start, end, score)`` of every bare name in ``text``."""
    out: list[tuple[int, int, float]] = []
    runs = _runs(text)
    if not runs:
        return out
    lex = lexicon()
    for m in runs:
        if _HOUSE_NUMBER.search(text, max(0, m.start() - 8), m.start()):
            continue  # "12 Laurel Lane": an address
        base = m.start()
        tokens = [(p.group(0), base + p.start(), base + p.end()) for p in _PART.finditer(m[0])]
        pairs = _given_led(tokens, lex)
        for i, j in pairs:
            out.append((tokens[i][1], tokens[j][2], GIVEN_LED_SCORE))
        if not pairs:
            span = _all_unknown(tokens, lex)
            if span is not None:
                out.append((tokens[span[0]][1], tokens[span[1]][2], ALL_UNKNOWN_SCORE))
    return out


class BareNamePrefilter:
    """The pre-filter: true only for texts that hold a bare name (the detection itself; its
    last answer is kept for the recognizer, which is asked about the same text next)."""

    def __init__(self) -> None:
        self._last: tuple[str, list[tuple[int, int, float]]] = ("", [])

    def find(self, text: str) -> list[tuple[int, int, float]]:
        last = self._last
        if last[0] == text and text:
            return last[1]
        found = find_bare_names(text)
        self._last = (text, found)
        return found

    def search(self, text: str) -> list[tuple[int, int, float]] | None:
        """The names found, or ``None`` (the analyzer tests pre-filters with ``is not None``)."""
        return self.find(text) or None

    def __reduce__(self) -> str:
        return "PREFILTER"  # pickled by reference: one instance (and cache) per process


PREFILTER = BareNamePrefilter()


#: What the analyzer asks Presidio for when the pre-filter hits; results are ``PERSON``. Asking
#: for PERSON itself would also run the cue-led name patterns (the costliest regexes of all)
#: on every text holding a bare name: a request key of its own runs this recognizer alone.
REQUEST_ENTITY = "BARE_NAME"


class BareNameRecognizer(EntityRecognizer):
    def __init__(self) -> None:
        super().__init__(supported_entities=[REQUEST_ENTITY], name="BareNameRecognizer")
        self.load()

    def load(self) -> None:
        """The word lists (``name_lexicon``, once per process) load when the recognizer is
        built, with the rest of the analyzer, not inside the first shard's redaction."""
        lexicon()

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list:
        return [
            RecognizerResult("PERSON", start, end, score, None)
            for start, end, score in PREFILTER.find(text)
        ]


SPEC = RecognizerSpec(
    name="bare_name",
    entities=(REQUEST_ENTITY,),
    prefilter=PREFILTER,
    build=lambda cfg: BareNameRecognizer(),
)
