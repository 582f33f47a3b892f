"""Decoding layers beyond escapes and base64: each undoes one way a value is disguised.

``normalise.py`` runs every layer whose cheap check hits, round after round, until a round
changes nothing (a fixed point: ``%2540`` is ``%40`` after one round and ``@`` after two; a
base64 blob holding percent-encoded JSON is undone layer by layer). Each layer is a pair
``present(text) -> bool`` and ``apply(text) -> (text, Mapping)``; a decoded piece maps back to
its whole original span (``text_map.py``), so the replacement removes all of it.

* **HTML tags** are removed ("jo<b>hn@exa</b>mple.com" is one address to a recognizer), their
  attributes kept as words;
* **JSON string escapes** ``\\"``, ``\\\\``, ``\\/`` are undone (JSON inside a JSON string, at any
  depth: each round peels one level; ``\\uXXXX`` is the escapes layer's);
* **quoted-printable** ``=40``, ``=3D`` and soft line breaks (``=`` at a line end);
* **hex byte runs** (``6a6f686e40...``, ``\\x6a\\x6f...``) that decode to printable text;
* **direction overrides**: text behind a right-to-left override (U+202E) is displayed
  reversed, so an address can be stored backwards; the reversed text is added beside it;
* **confusables**: Cyrillic and Greek look-alikes inside a Latin or digit token become Latin
  letters; combining marks, keycap marks and variation selectors after a digit are dropped
  ("1️⃣" is "1"); O/o and l/I typed inside a digit run become 0 and 1; digits spelled as
  words in a run of seven or more become digits (``spelled_digits.py``);
* **mailto links**: every address of ``?cc=`` / ``&bcc=`` stands on its own;
* **e-mail disguises**: ``name(at)domain.com``, ``name [at] domain [dot] com``, spaces around
  ``@``, other languages' words for "@" and "." ("arroba", "Klammeraffe", "собака",
  "chiocciola", "apenstaartje", "małpa", "arobase"; "punto", "Punkt", "точка", "point",
  "kropka", "punt"); the English word "at" only with dot words after it ("look at
  example.com" stays).

The confusable table is hand-written: no maintained package in the environment offers one
(Unicode's confusables.txt is not shipped with Python); it lists the letters that render like
ASCII letters in common fonts.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from golden_distill.redaction import spelled_digits
from golden_distill.redaction.text_map import Builder, Mapping

Layer = tuple[Callable[[str], object], Callable[[str], tuple[str, Mapping]]]

# --- HTML tags -----------------------------------------------------------------------------
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]{0,15}(?:\s[^<>]{0,300})?/?>")


def _tags_present(text: str) -> bool:
    return "<" in text and _TAG.search(text) is not None


def _tag(m: re.Match[str]) -> str:
    """A bare tag joins its neighbours ("jo<b>hn"); a tag's attributes stay, as words of their
    own (an ``href`` holds a ``mailto:`` link)."""
    tag = m.group(0)
    space = next((i for i, c in enumerate(tag) if c.isspace()), -1)
    return "" if space < 0 else " " + tag[space:-1].strip().rstrip("/") + " "


def _tags(text: str) -> tuple[str, Mapping]:
    return sub_layer(text, _TAG, _tag)


# --- JSON string escapes -------------------------------------------------------------------
_JSON_ESCAPE = re.compile(r'\\[\\"/]')


def _json_present(text: str) -> bool:
    return "\\" in text and _JSON_ESCAPE.search(text) is not None


def _json(text: str) -> tuple[str, Mapping]:
    return sub_layer(text, _JSON_ESCAPE, lambda m: m.group(0)[1])


# --- quoted-printable ----------------------------------------------------------------------
#: What makes a text quoted-printable enough to decode: an encoded @ or =, or a soft line break
#: ("limit=42" alone is no reason).
_QP_CUE = re.compile(r"=(?:40|3[Dd]|\r?\n)")
_QP_RUN = re.compile(r"(?:=[0-9A-F]{2}|=\r?\n)+")
_QP_BYTE = re.compile(r"=([0-9A-F]{2})|=\r?\n")


def _qp_decode(m: re.Match[str]) -> str:
    raw = bytes(int(b.group(1), 16) for b in _QP_BYTE.finditer(m.group(0)) if b.group(1))
    return raw.decode("utf-8", errors="replace")


def _qp(text: str) -> tuple[str, Mapping]:
    return sub_layer(text, _QP_RUN, _qp_decode)


# --- hex byte runs -------------------------------------------------------------------------
_HEX_RUN = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){6,}(?![0-9A-Za-z])|(?:\\x[0-9a-fA-F]{2}){4,}"
)
_HEX_CHECK = re.compile(r"[0-9a-fA-F]{12}|\\x[0-9a-fA-F]{2}")


def _hex_present(text: str) -> bool:
    return _HEX_CHECK.search(text) is not None and _HEX_RUN.search(text) is not None


_WORDY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 @._-+:/,'\n")


def _hex_decode(m: re.Match[str], printable: Callable[[bytes], str | None]) -> str:
    """The text a hex run spells, when it is one: a run of decimal digits only (a tracking
    number, an order id) is none, and the text must be mostly letters, digits and the
    punctuation of addresses (a random id decodes to "R!)$rp")."""
    digits = m.group(0).replace("\\x", "")
    if digits.isdecimal():
        return m.group(0)
    decoded = printable(bytes.fromhex(digits))
    if decoded is None or sum(c in _WORDY for c in decoded) < 0.9 * len(decoded):
        return m.group(0)
    return decoded


def hex_layer(printable: Callable[[bytes], str | None]) -> Layer:
    return _hex_present, lambda t: sub_layer(t, _HEX_RUN, lambda m: _hex_decode(m, printable))


# --- right-to-left override ----------------------------------------------------------------
_RLO = re.compile("\u202e([^\u202c\n]*)\u202c?")


def _rlo_present(text: str) -> bool:
    return "\u202e" in text


def _rlo(text: str) -> tuple[str, Mapping]:
    b = Builder()
    cursor = 0
    for m in _RLO.finditer(text):
        b.add(text[cursor : m.start()], cursor, m.start(), True)
        b.add(m.group(1), m.start(1), m.end(1), True)  # as stored
        b.add(" " + m.group(1)[::-1], m.start(), m.end(), False)  # as displayed
        cursor = m.end()
    b.add(text[cursor:], cursor, len(text), True)
    return b.done()


# --- confusables ---------------------------------------------------------------------------
_HOMOGLYPHS = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
    "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "А": "A", "В": "B",
    "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Һ": "H",
    # Greek
    "α": "a", "ο": "o", "ν": "v", "ρ": "p", "τ": "t", "ι": "i", "κ": "k", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}  # fmt: skip
_CONF = "".join(_HOMOGLYPHS)
_HOMOGLYPH_TABLE = str.maketrans(_HOMOGLYPHS)
#: A look-alike next to an ASCII letter, digit, @ or dot: a disguised token, not Russian text.
_CONF_ADJACENT = re.compile(f"[A-Za-z0-9@.][{_CONF}]|[{_CONF}][A-Za-z0-9@.]")
_CONF_TOKEN = re.compile(r"[\w@.%+\-]+")
#: Combining marks, enclosing keycap, variation selectors: nothing a digit carries in data.
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe00-\ufe0f"
_DIGIT_MARKS = re.compile(f"(?<=[0-9])[{_MARKS}]+")
#: What may hide in a non-ASCII text: a look-alike in a Latin token, a mark after a digit.
NON_ASCII_CUE = f"[A-Za-z0-9@.][{_CONF}]|[{_CONF}][A-Za-z0-9@.]|[0-9][{_MARKS}]"


def _homoglyph_token(m: re.Match[str]) -> str:
    token = m.group(0)
    if not any(c in _HOMOGLYPHS for c in token):
        return token
    if not any(c.isascii() and (c.isalnum() or c == "@") for c in token):
        return token  # a word in Cyrillic or Greek: left as it is
    return token.translate(_HOMOGLYPH_TABLE)


def _confusables_present(text: str) -> bool:
    return not text.isascii() and (
        _CONF_ADJACENT.search(text) is not None or _DIGIT_MARKS.search(text) is not None
    )


def _confusables(text: str) -> tuple[str, Mapping]:
    text1, map1 = sub_layer(text, _DIGIT_MARKS, lambda m: "")
    if not _CONF_ADJACENT.search(text1):
        return text1, map1
    # one character for one: the first step's mapping holds for the result
    return _CONF_TOKEN.sub(_homoglyph_token, text1), map1


# --- letters typed for digits --------------------------------------------------------------
_LETTER_DIGIT_CUE = re.compile(r"[0-9][OolI]|[OolI][0-9]")
_LETTER_DIGIT_RUN = re.compile(r"(?<![A-Za-z])[0-9OolI](?:[ .\-]?[0-9OolI]){6,}(?![A-Za-z])")
_LETTER_DIGIT = str.maketrans("OolI", "0011")


def _letter_digit_present(text: str) -> bool:
    return _LETTER_DIGIT_CUE.search(text) is not None and bool(_LETTER_DIGIT_RUN.search(text))


def _letter_digit(m: re.Match[str]) -> str:
    run = m.group(0)
    if sum(c.isdigit() for c in run) < 5:
        return run
    return run.translate(_LETTER_DIGIT)


def _letter_digits(text: str) -> tuple[str, Mapping]:
    new = _LETTER_DIGIT_RUN.sub(_letter_digit, text)  # one character for one
    b = Builder()
    b.add(new, 0, len(text), True)
    return b.done()


# --- e-mail disguises ----------------------------------------------------------------------
#: Words for "@" and "." in the languages users write to agents in (es/pt, de, ru, it, nl, pl,
#: fr): "juan arroba ejemplo punto com", "max punkt muster klammeraffe beispiel punkt de".
_AT_WORDS = ("arroba", "klammeraffe", "собака", "chiocciola", "apenstaartje", "małpa", "malpa",
             "arobase")  # fmt: skip
_DOT_WORDS = ("dot", "punto", "punkt", "точка", "point", "kropka", "punt", "ponto")
_FOREIGN_AT = "(?:" + "|".join(_AT_WORDS) + ")"
_DOT_WORD = "(?:" + "|".join(_DOT_WORDS) + ")"
_BRACKET_AT = rf"[(\[{{<]\s*(?:at|{_FOREIGN_AT})\s*[)\]}}>]"
_BRACKET_DOT = rf"[(\[{{<]\s*{_DOT_WORD}\s*[)\]}}>]"
_SPELLED_DOT = rf"(?:\s*{_BRACKET_DOT}\s*|\s+{_DOT_WORD}\s+)"
#: The local part: its dots may be spelled too ("max punkt muster klammeraffe ..."), when an
#: "@" or a word for it follows the last part.
_LOCAL_PART = r"[A-Za-z0-9._%+\-]+"
_AT_AHEAD = rf"(?:\s*{_BRACKET_AT}|\s*@|\s+(?:at|{_FOREIGN_AT})\s)"
_LOCAL = (
    rf"(?<![A-Za-z0-9._%+\-])((?:{_LOCAL_PART}{_SPELLED_DOT}"
    rf"(?=(?:{_LOCAL_PART}{_SPELLED_DOT})*{_LOCAL_PART}{_AT_AHEAD}))*{_LOCAL_PART})"
)
#: A bracketed "at", an @ with spaces or another language's word for it: the domain may use
#: real dots or dot words.
_EMAIL_DISGUISE = re.compile(
    rf"{_LOCAL}(?:\s*{_BRACKET_AT}\s*|\s+@\s*|\s*@\s+|\s+{_FOREIGN_AT}\s+)([A-Za-z0-9\-]+)"
    rf"((?:(?:{_SPELLED_DOT}|\.)[A-Za-z0-9\-]+)+)",
    re.IGNORECASE,
)
#: The English word "at": only with dot words ("look at example.com" is no address).
_EMAIL_WORDS = re.compile(
    rf"{_LOCAL}\s+at\s+([A-Za-z0-9\-]+)((?:{_SPELLED_DOT}[A-Za-z0-9\-]+)+)",
    re.IGNORECASE,
)
#: What a bracketed "at" ends with: a substring test before any regex.
_BRACKET_ENDS = ("t)", "t]", "t}", "t>", "T)", "T]", "T}", "T>", "t )", "T )", "t ]", "T ]")
#: Substrings of the other languages' words for "@" and "." (as written, capitalised, upper).
AT_STEMS = tuple(
    stem
    for w in ("rroba", "affe", "обак", "occiola", "staartje", "łpa", "lpa", "robase")
    for stem in (w, w.upper())
)
_DOT_STEMS = tuple(
    stem
    for w in ("dot", "punt", "unkt", "point", "kropka", "точка", "ponto")
    for stem in (w, w.capitalize(), w.upper())
)
_EMAIL_CUE = re.compile(rf"{_BRACKET_AT}|\s@|@\s|\s{_FOREIGN_AT}\s", re.IGNORECASE)
_WORDS_CUE = re.compile(r"\sat\s", re.IGNORECASE)
_DOT_PART = re.compile(_SPELLED_DOT, re.IGNORECASE)


def _email(m: re.Match[str]) -> str:
    domain = _DOT_PART.sub(".", m.group(3))
    if not domain.rsplit(".", 1)[-1].isalpha():
        return m.group(0)  # "call 555 @ 12.30": no top-level domain
    return f"{_DOT_PART.sub('.', m.group(1))}@{m.group(2)}{domain}"


def _disguise_present(t: str) -> bool:
    cue = "@" in t or any(b in t for b in _BRACKET_ENDS) or any(s in t for s in AT_STEMS)
    return cue and _EMAIL_CUE.search(t) is not None and _EMAIL_DISGUISE.search(t) is not None


def _words_present(t: str) -> bool:
    dot = any(s in t for s in _DOT_STEMS)
    return dot and _WORDS_CUE.search(t) is not None and _EMAIL_WORDS.search(t) is not None


EMAIL_LAYERS: tuple[Layer, ...] = (
    (_disguise_present, lambda t: sub_layer(t, _EMAIL_DISGUISE, _email)),
    (_words_present, lambda t: sub_layer(t, _EMAIL_WORDS, _email)),
)


# --- mailto links --------------------------------------------------------------------------
#: ``mailto:a@x.org?cc=b@y.org&bcc=c@z.org``: a recognizer sees one address glued to the query;
#: each header value becomes a word of its own (comma-separated lists too).
_MAILTO = re.compile(r"(?i)mailto:[^\s\"'<>]+")
_MAILTO_SPLIT = re.compile(r"(?i)[?&](?:to|cc|bcc)=|,|%2C|&(?=[a-z]+=)")


def _mailto_present(text: str) -> bool:
    return "ailto:" in text or "AILTO:" in text


def _mailto(text: str) -> tuple[str, Mapping]:
    b = Builder()
    cursor = 0
    for link in _MAILTO.finditer(text):
        for sep in _MAILTO_SPLIT.finditer(text, link.start(), link.end()):
            b.add(text[cursor : sep.start()], cursor, sep.start(), True)
            b.add(" ", sep.start(), sep.end(), False)
            cursor = sep.end()
    b.add(text[cursor:], cursor, len(text), True)
    return b.done()


# --- shared --------------------------------------------------------------------------------
def sub_layer(text: str, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]):  # type: ignore[no-untyped-def]
    """Each match replaced by ``repl(match)``, mapped to its whole span (unchanged: kept)."""
    b = Builder()
    cursor = 0
    for m in pattern.finditer(text):
        new = repl(m)
        if new == m.group(0):
            continue
        b.add(text[cursor : m.start()], cursor, m.start(), True)
        b.add(new, m.start(), m.end(), False)
        cursor = m.end()
    b.add(text[cursor:], cursor, len(text), True)
    return b.done()


#: Layers that run before the escapes layer in each round (structure first).
BEFORE_ESCAPES: tuple[Layer, ...] = (
    (_rlo_present, _rlo),
    (_tags_present, _tags),
    (_json_present, _json),
    (_mailto_present, _mailto),
)
#: Layers that run after the escapes layer, before base64 (``normalise.py``).
AFTER_ESCAPES: tuple[Layer, ...] = (
    (lambda t: _QP_CUE.search(t), _qp),
    (_confusables_present, _confusables),
    (_letter_digit_present, _letter_digits),
    (spelled_digits.present, spelled_digits.apply),
)
