"""Rewriting one JSON slot of a case with the case's known values (token level, ``walker.py``).

A class rather than nested closures: a closure that calls itself (JSON inside a string is
edited as JSON too) is a reference cycle, and each cycle held the case's ``Propagator`` (its
automata and caches) until the cyclic GC ran, which ``shard.redact_table`` pauses for a whole
shard: memory grew with the shard and the final collection walked it all.
"""

from __future__ import annotations

import re
from collections import Counter

import orjson

from golden_distill.redaction.key_rules import KeyRule, NonPersonalRule, Path, PiiRule, RuleMatcher
from golden_distill.redaction.propagation import Propagator
from golden_distill.redaction.pseudonym import value_token
from golden_distill.redaction.recognizers.json_numbers import personal_float
from golden_distill.redaction.walker import (
    Slot,
    nested_json,
    rewrite_json_strings,
    rewrite_json_text,
)

_INTEGER = re.compile(r"-?\d+")


def _no_path() -> Path:
    return ()


class JsonSlotRewriter:
    """Replaces known values in one JSON slot: strings everywhere (whole short values only
    where a rule owns them), numbers under rules and unowned numbers a scan found."""

    __slots__ = (
        "counts",
        "escaped_needle",
        "matcher",
        "needs_paths",
        "numeric",
        "prop",
        "secret",
        "short",
    )

    def __init__(
        self,
        matcher: RuleMatcher,
        secret: bytes,
        prop: Propagator,
        counts: Counter[str],
        numeric: bool,
    ) -> None:
        self.matcher = matcher
        self.secret = secret
        self.prop = prop
        self.counts = counts
        self.numeric = numeric
        self.short = prop.local_values
        self.needs_paths = False
        self.escaped_needle: bool | None = None

    def _escaped_needle(self) -> bool:
        """Whether a known value holds a character JSON text escapes (it cannot then be found
        in the raw text): computed once per case, on first need."""
        if self.escaped_needle is None:
            self.escaped_needle = any(
                any(c < " " or c in '"\\' for c in needle) for needle, _ in self.prop.needles
            )
        return self.escaped_needle

    def rewrite(self, slot: Slot) -> str:
        prop = self.prop
        short = self.short
        text = slot.text
        # values may hide behind \u escapes, or hold a character JSON escapes (a quoted-printable
        # soft line break, a tab): decode to be sure
        escaped = "\\u" in text or ("\\" in text and self._escaped_needle())
        # key paths are only needed for numbers under rules and for short values (replaced
        # where a rule owns them, not everywhere): otherwise the fast string-token path will do
        self.needs_paths = self.numeric or bool(
            short and (escaped or any(v in text for v in short))
        )
        if not self.needs_paths and not (escaped or prop.has_any(text)):
            return text
        if not self.needs_paths:  # edit string tokens only
            if text.isascii() and "\\" not in text:
                return self._rewrite_hit_tokens(text)
            return rewrite_json_strings(text, self.on_plain_string)
        return rewrite_json_text(text, self.on_string, self.on_number if self.numeric else None)

    def _rewrite_hit_tokens(self, text: str) -> str:
        """``rewrite_json_strings(text, self.on_plain_string)`` for ASCII JSON text without a
        backslash, visiting only the string tokens a known value occurs in.

        Without escapes a string token is its quotes around its value, quotes alternate between
        opening and closing, and no value holds JSON text (that would need escaped quotes). So
        a token with no needle occurrence inside it is one ``on_plain_string`` returns as it is
        (``Propagator.replace`` finds nothing in it), and only the others need the visit."""
        tokens: dict[int, int] = {}  # opening quote -> closing quote
        count = text.count
        for start, end in self.prop.raw_hits(text):
            if '"' in text[start:end] or count('"', 0, start) % 2 == 0:
                continue  # across tokens, or outside any string (a number, a literal)
            tokens.setdefault(text.rfind('"', 0, start), text.find('"', end))
        if not tokens:
            return text
        parts: list[str] = []
        cursor = 0
        for open_quote in sorted(tokens):
            close_quote = tokens[open_quote]
            value = text[open_quote + 1 : close_quote]
            new = self.on_plain_string(value)
            if new != value:
                parts.append(text[cursor:open_quote])
                parts.append(orjson.dumps(new).decode())
                cursor = close_quote + 1
        if not parts:
            return text
        parts.append(text[cursor:])
        return "".join(parts)

    def on_plain_string(self, value: str) -> str:
        return self.on_string(value, _no_path)

    def on_string(self, value: str, path_fn) -> str:  # type: ignore[no-untyped-def]
        if nested_json(value) is not None:  # JSON inside a string: edit it as JSON too
            if not self.needs_paths:
                return rewrite_json_strings(value, self.on_plain_string)
            return rewrite_json_text(
                value, self.on_string, self.on_number if self.numeric else None
            )
        prop = self.prop
        if value in self.short and isinstance(self.matcher.match(path_fn()), KeyRule | PiiRule):
            label = prop.label_of(value)
            if label is not None:
                self.counts[label] += 1
                return prop.substitute(value)
        return prop.replace(value, self.counts)

    def on_number(self, token: str, path: Path) -> str | None:
        prop = self.prop
        rule = self.matcher.match(path)
        if isinstance(rule, NonPersonalRule):
            return None
        if rule is None or (isinstance(rule, PiiRule) and not rule.owns(path, token)):
            label = prop.label_of(token)  # an unowned number found by a scan or an id
            if label is None and _personal_float(path, token):
                # the scan knows a float by its shortest form ("48.85837" for "48.858370")
                token = repr(float(token))
                label = prop.label_of(token)
            if label is None:
                return None
            self.counts[label] += 1
            new = prop.substitute(token)
            return new if _INTEGER.fullmatch(new) else orjson.dumps(new).decode()
        if isinstance(rule, PiiRule):
            amount = "." in token and not _personal_float(path, token)
            if amount or (rule.evidence and len(token.lstrip("-")) < 4):
                return None
            self.counts[rule.entity_type] += 1
            new = value_token(token, rule.entity_type, self.secret)
            prop.emitted.add(new)
            return orjson.dumps(new).decode()
        if not _INTEGER.fullmatch(token):
            return None  # keys are integers; a float "key" is left for verification
        self.counts[rule.label] += 1
        prop.keys.setdefault(token, rule)
        return prop.substitute(token)


def _personal_float(path: Path, token: str) -> bool:
    """A float token that is a card or a coordinate (``recognizers/json_numbers.py``)."""
    try:
        return personal_float(tuple(path), float(token)) is not None
    except ValueError:
        return False
