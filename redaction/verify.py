"""Verification after scrubbing: fail closed.

A scrubbed case is re-scanned before it may be published. It goes to quarantine (with entity
types, never values) when: a JSON field that parsed before no longer parses; a value the case
knew to be personal (or a key) still appears anywhere; or the recognizers find anything at or
above the verification threshold that is not one of the substitutes this step wrote itself (a
format-kept 16-digit key pseudonym may pass Luhn by chance: that is not personal data).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from golden_distill.redaction.analyzer import Finding
from golden_distill.redaction.propagation import Propagator
from golden_distill.redaction.walker import _NOT_JSON, parse_json, strings_and_keys

UNPARSEABLE = "unparseable_after_redaction"
RESIDUAL_KNOWN_VALUE = "residual_known_value"
RESIDUAL_PII = "residual_pii"
PII_IN_VERBATIM = "pii_in_verbatim_field"
_LONG_DIGITS = re.compile(r"\d{7,}")

#: Value tokens written by ``pseudonym.value_token``: ignored when looking for leftovers.
_VALUE_TOKEN = re.compile(r"<[A-Z][A-Z0-9_]*_[0-9a-f]{8}>")


@dataclass(frozen=True, slots=True)
class Verdict:
    reason: str | None
    entity_types: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.reason is None


@dataclass(frozen=True, slots=True)
class ScrubbedField:
    text: str
    was_json: bool
    #: the parsed value when the text is unchanged by scrubbing (no need to parse it again)
    parsed: Any = None


def _strings(fields: Iterable[ScrubbedField], parsed: list[Any]) -> Iterator[str]:
    for f, value in zip(fields, parsed, strict=True):
        if f.was_json:
            leaves: list[str] = []
            keys: list[str] = []
            strings_and_keys(value, leaves, keys)
            yield from leaves
            yield from keys
        else:
            yield f.text


def verify_scrubbed(
    fields: list[ScrubbedField],
    propagator: Propagator,
    findings_of: Callable[[list[str]], dict[str, list[Finding]]],
    threshold: float,
    non_personal: set[str] | frozenset[str] = frozenset(),
    verbatim: list[str] | None = None,
    owned: list[str] | None = None,
) -> Verdict:
    """Re-scan the scrubbed fields of one case; ``Verdict.ok`` means it may be published.

    ``verbatim``: fields kept byte for byte (tool names, versions...): any known value or any
    finding in them quarantines the case, since they may not be rewritten. ``owned``: fields a
    rule rewrote whole (the recording path, ``provenance.py``): checked for every value the case
    knows, not re-analysed (their output is substitutes and ordinary words by construction)."""
    if verbatim:
        labels = {label for text in verbatim for _, _, label in propagator.find(text)}
        if any(_LONG_DIGITS.search(text) for text in verbatim):
            labels.add("DIGIT_RUN")  # a phone or account number inside a tool or intent name
        for found in findings_of(list(verbatim)).values():
            labels.update(f.entity_type for f in found if f.score >= threshold)
        if labels:
            return Verdict(PII_IN_VERBATIM, tuple(sorted(labels)))
    parsed: list[Any] = []
    for f in fields:
        value = None
        if f.was_json:
            value = f.parsed if f.parsed is not None else parse_json(f.text)
            if value is _NOT_JSON:
                return Verdict(UNPARSEABLE)
        parsed.append(value)
    strings = [s for s in dict.fromkeys(_strings(fields, parsed)) if s]

    leftovers: set[str] = set()
    if propagator.needles:
        for s in [*strings, *(owned or ())]:
            # value tokens all start with "<": most strings need no substitution pass
            for _, _, label in propagator.find(_VALUE_TOKEN.sub(" ", s) if "<" in s else s):
                leftovers.add(label)
    if leftovers:
        return Verdict(RESIDUAL_KNOWN_VALUE, tuple(sorted(leftovers)))

    emitted = propagator.emitted
    residual: set[str] = set()
    # a string that is one of this case's substitutes as a whole is not re-analyzed: any span
    # found in it would lie inside a substitute, which the loop below ignores anyway
    for text, found in findings_of([s for s in strings if s not in emitted]).items():
        for f in found:
            if f.score < threshold:
                continue
            span = text[f.start : f.end]
            if span in non_personal or any(span in sub for sub in emitted):
                continue
            residual.add(f.entity_type)
    if residual:
        return Verdict(RESIDUAL_PII, tuple(sorted(residual)))
    return Verdict(None)
