"""Normalise text before detecting, and map findings back to spans of the original text.

Personal data hides behind encodings a recognizer never sees: ``mei%40example.com``,
``mei&#64;example.com``, full-width digits, digits split by single spaces, dots or zero-width
characters, base64 / base64url runs (a JWT payload holding an e-mail), "mei at example dot com".
Recognizers run on the normalised text; every finding is mapped back to the original characters
it came from and widened to the whole original token, so the replacement removes all of it (a
full-width card keeps no last digit behind).

Layers, each a function ``str -> (str, Mapping)`` (``text_map.py``); their mappings compose.
They run round after round until a round changes nothing (a fixed point: ``%2540`` needs two
rounds, base64 of percent-encoded text two, JSON escaped inside JSON one per level), at most
``MAX_ROUNDS``:

1. direction overrides, HTML tags, JSON string escapes (``decode_layers.py``);
2. escapes and compatibility forms: URL ``%XX`` runs, HTML entities, literal ``\\uXXXX``, full
   NFKC of every character it changes (ligatures, circled and superscript digits, full-width
   letters and digits, compatibility ideographs...; only full-width CJK punctuation is left as
   it is, so ordinary Chinese text is not analyzed twice for nothing), dashes and other digit
   scripts, format characters removed;
3. quoted-printable, confusables (look-alike letters, marks after digits, letters for digits)
   (``decode_layers.py``);
4. hex byte runs and base64 / base64url runs (16+ characters) that decode to printable UTF-8 or
   UTF-16LE text (a PowerShell ``-EncodedCommand``) are replaced by their text, which maps to
   the whole run (the original text is analyzed as well, so nothing in the run is lost);
5. e-mail disguises ("name at domain dot com", ``name(at)domain.com``, spaces around ``@``);
6. single separators inside digit runs of 7+ digits are removed.

Texts with none of the triggers (most of a run) are returned as ``None`` without work.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass

from golden_distill.redaction import decode_layers, spelled_digits
from golden_distill.redaction.text_map import Builder as _Builder
from golden_distill.redaction.text_map import Mapping

__all__ = ["Mapping", "Normalised", "apply_layers", "decode_base64", "normalise"]

#: Full-width punctuation of Chinese and Japanese text that NFKC would turn into ASCII
#: punctuation (，：；！？（）...) and the ellipsis "…": left as they are, so ordinary Chinese
#: text and chat text are not analyzed twice for nothing (no recognizer needs them as ASCII).
#: Full-width @ % + - . _ are normalised.
_CJK_PUNCTUATION = frozenset(
    chr(c)
    for c in (
        *range(0xFF01, 0xFF10),
        *range(0xFF1A, 0xFF20),
        *range(0xFF3B, 0xFF41),
        *range(0xFF5B, 0xFF66),
    )
    if chr(c) not in "\uff05\uff0b\uff0d\uff0e\uff3f"
) | frozenset("\u2024\u2025\u2026")  # dot leaders and the ellipsis: common, and only dots
_FORMAT_CHARS = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"


def _nfkc_class(alnum_only: bool = False) -> str:
    """A regex class of every character NFKC changes (ligatures, circled and superscript
    digits, full-width forms, other digit scripts' compatibility forms, ...), as ranges;
    ``alnum_only``: only those that become letters and digits (parts of a token)."""
    points = []
    for c in range(0x80, 0x30000):
        norm = unicodedata.normalize("NFKC", chr(c))
        if norm == chr(c) or chr(c) in _CJK_PUNCTUATION:
            continue
        if not alnum_only or norm.isalnum():
            points.append(c)
    ranges: list[tuple[int, int]] = []
    for c in points:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


def _digit_class() -> str:
    """A regex class of the decimal digits of every other script (Arabic-Indic, Devanagari,
    Bengali, Thai...) that NFKC leaves as they are: each is read as its ASCII digit."""
    ranges: list[tuple[int, int]] = []
    for c in range(0x80, 0x20000):
        ch = chr(c)
        if ch.isdecimal() and unicodedata.normalize("NFKC", ch) == ch:
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1] = (ranges[-1][0], c)
            else:
                ranges.append((c, c))
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


#: Non-ASCII characters that matter for detection: everything NFKC changes (but the CJK
#: punctuation above), other scripts' digits, dashes, format characters.
_COMPAT = _nfkc_class() + _digit_class() + "\u2010-\u2015\u2212\u3000" + _FORMAT_CHARS
#: ``\uXXXX`` not after a backslash: ``\\u0040`` is an escaped backslash first (JSON inside a
#: JSON string), undone by the JSON layer before this one decodes the ``\u``.
_ESCAPES = r"(?:%[0-9A-Fa-f]{2})+|&#?[A-Za-z0-9]+;|(?<!\\)(?:\\u[0-9a-fA-F]{4})+"
#: What makes normalising worth it in ASCII text (a non-ASCII text is also checked for
#: ``_COMPAT_CHAR``: a search with that large class costs more, and ASCII text cannot match it).
#: Each part is a superset of what its layer's own check needs (``normalise``): the escapes
#: and the base64 run as the layers match them (case-sensitive: a case-insensitive alternation
#: costs twice as much per text), a digit run split 3+ times (a date or a price has fewer: only
#: NBSP, non-ASCII and so found by ``_COMPAT_CHAR``, also splits digits), the words of
#: "name at domain dot com".
_TRIGGER_ASCII = re.compile(
    _ESCAPES + r"|\d(?:[ .\-]\d+){3,}|[A-Za-z0-9+/_\-]{16,}|(?i:\s(?:at|dot|\[at\]|\(at\))\s)"
)
#: The other layers' cues, each behind a substring test (a C-speed scan): one regex with all of
#: them as alternatives cost 55% more per text than the old trigger, these checks 25%.
_SPACED_AT = re.compile(r"\s@|@\s")
_BRACKET_AT = re.compile(r"[(\[{<][Aa][Tt][)\]}>]")
_TAG_START = re.compile(r"<[A-Za-z/]")
_QP_CUE = re.compile(r"=(?:40|3[Dd]|\r?\n)")
_BACKSLASH_CUE = re.compile(r'\\[\\"/x]')
_LETTER_DIGIT = re.compile(r"[0-9][OolI]|[OolI][0-9]")


def _trigger_ascii(t: str) -> bool:
    """Whether an ASCII text may hold anything a layer undoes (a superset of the layers' own
    checks: a false hit costs the layers' checks, a miss would skip a disguise)."""
    return bool(
        _TRIGGER_ASCII.search(t)
        or ("@" in t and _SPACED_AT.search(t))
        or (
            ("t)" in t or "t]" in t or "T)" in t or "T]" in t or "t}" in t or "t>" in t)
            and _BRACKET_AT.search(t)
        )
        or ("<" in t and _TAG_START.search(t))
        or ("=" in t and _QP_CUE.search(t))
        or ("\\" in t and _BACKSLASH_CUE.search(t))
        or "ailto:" in t
        or "AILTO:" in t
        or _LETTER_DIGIT.search(t)
        or spelled_digits.present(t)
        or any(stem in t for stem in decode_layers.AT_STEMS)  # "arroba", "собака", ...
    )


_COMPAT_CHAR = re.compile(f"[{_COMPAT}]|{decode_layers.NON_ASCII_CUE}")
_SPECIAL_ASCII = re.compile(_ESCAPES)
_SPECIAL = re.compile(f"{_ESCAPES}|[{_COMPAT}]+")


def _special(text: str) -> re.Pattern[str]:
    return _SPECIAL_ASCII if text.isascii() else _SPECIAL


_FORMAT = re.compile(f"[{_FORMAT_CHARS}]")
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,}={0,2}")
#: 7+ digits with 3+ single separators (split on purpose: "4 1 1 1 ...", "01 42 68 53 00");
#: dates, amounts and ordinary phone layouts are left to the recognizers that know them.
_DIGIT_RUN = re.compile(r"\d(?:[ .\-\u00a0]?\d){6,}")
_DIGIT_SEP = re.compile(r"[ .\-\u00a0]")
#: Characters a mapped-back span is widened over: the token the finding sits in.
_TOKEN_CHAR = re.compile(f"[A-Za-z0-9{_nfkc_class(alnum_only=True)}\\uff0d\\u200b-\\u200f\\u2060]")


def _decode_special(token: str) -> str:
    if token[0] == "%":
        return urllib.parse.unquote(token)
    if token[0] == "&":
        return html.unescape(token)
    if token[0] == "\\":
        return token.encode("ascii").decode("unicode_escape")
    return token


def _escapes(text: str) -> tuple[str, Mapping]:
    b = _Builder()
    cursor = 0
    for m in _special(text).finditer(text):
        b.add(text[cursor : m.start()], cursor, m.start(), True)
        token = m.group(0)
        if token[0] in "%&\\":
            b.add(_decode_special(token), m.start(), m.end(), False)
        else:  # a non-ASCII run: per character, NFKC, format characters dropped
            for i, ch in enumerate(token):
                if _FORMAT.match(ch):
                    continue
                pos = m.start() + i
                norm = unicodedata.normalize("NFKC", ch) if not ch.isascii() else ch
                if norm == ch and ch.isdecimal():
                    norm = str(unicodedata.decimal(ch))  # "٤" is 4
                b.add(norm, pos, pos + 1, len(norm) == 1)
        cursor = m.end()
    b.add(text[cursor:], cursor, len(text), True)
    return b.done()


def _printable_text(raw: bytes) -> str | None:
    """``raw`` as text when it is mostly printable letters: UTF-8, or UTF-16LE when every odd
    byte is zero or nearly (a PowerShell ``-EncodedCommand``); ``None`` for binary."""
    if len(raw) >= 12 and raw[1::2].count(0) >= 0.8 * (len(raw) // 2):
        try:
            text = raw.decode("utf-16-le")
        except UnicodeDecodeError:
            return None
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if len(text) < 6:
        return None
    good = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    letters = sum(ch.isalpha() for ch in text)
    return text if good >= 0.95 * len(text) and letters >= 0.3 * len(text) else None


def decode_base64(run: str) -> str | None:
    """The text a base64 / base64url run decodes to, or ``None`` (binary, not base64)."""
    body = run.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable_text(raw)


def _base64_run(m: re.Match[str]) -> str:
    decoded = decode_base64(m.group(0))
    return m.group(0) if decoded is None else f" {decoded} "


def _base64(text: str) -> tuple[str, Mapping]:
    return _sub_layer(text, _B64_RUN, _base64_run)


_sub_layer = decode_layers.sub_layer


def _digits(m: re.Match[str]) -> str:
    run = m.group(0)
    if len(_DIGIT_SEP.findall(run)) < 3:
        return run
    return _DIGIT_SEP.sub("", run)


@dataclass(frozen=True, slots=True)
class Normalised:
    """A normalised text and the way back to the original's spans."""

    original: str
    text: str
    maps: tuple[Mapping, ...]  # applied in order; mapped back in reverse

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span a finding at ``[start, end)`` of ``text`` came from, widened to
        the whole original token."""
        for mapping in reversed(self.maps):
            start, end = mapping.span(start, end)
        src = self.original
        while start > 0 and _TOKEN_CHAR.match(src[start - 1]) and _TOKEN_CHAR.match(src[start]):
            start -= 1
        while end < len(src) and _TOKEN_CHAR.match(src[end]) and _TOKEN_CHAR.match(src[end - 1]):
            end += 1
        return start, end


_DIGIT_SPLIT = re.compile(r"\d(?:[ .\-\u00a0]\d+){3,}")


def normalise(text: str) -> Normalised | None:
    """The normalised form of ``text``, or ``None`` when normalising changes nothing. Each
    layer runs only when its own pattern is present."""
    if not _trigger_ascii(text) and (text.isascii() or not _COMPAT_CHAR.search(text)):
        return None
    return apply_layers(text)


#: Enough for every layering seen in data (percent twice inside base64 inside JSON); a text
#: still changing after that many rounds is analyzed as it then is.
MAX_ROUNDS = 6

_HEX = decode_layers.hex_layer(_printable_text)
_LAYERS: tuple[decode_layers.Layer, ...] = (
    *decode_layers.BEFORE_ESCAPES,
    (lambda t: _special(t).search(t), _escapes),
    *decode_layers.AFTER_ESCAPES,
    _HEX,
    (_B64_RUN.search, _base64),
    *decode_layers.EMAIL_LAYERS,
    (_DIGIT_SPLIT.search, lambda t: _sub_layer(t, _DIGIT_RUN, _digits)),
)


def apply_layers(text: str) -> Normalised | None:
    """``normalise`` without its first cheap check (tests: the check never changes a result)."""
    current = text
    maps: list[Mapping] = []
    for _ in range(MAX_ROUNDS):
        changed = False
        for present, layer in _LAYERS:
            if not present(current):
                continue
            new, mapping = layer(current)
            if new != current:
                maps.append(mapping)
                current = new
                changed = True
        if not changed:
            break
    if current == text:
        return None
    return Normalised(text, current, tuple(maps))
