"""The key pass's own walk over a case: only what decides its original keys.

``KeyScanner.keys`` needs the set of (original, rule) a case's redaction could pseudonymise:
key columns, leaves a key rule owns, key text patterns in scanned text, and identifier-shaped
values no rule classifies. ``case_scan.scan_case`` finds the same set on the way to everything
redaction needs (a copy of the row with setters per slot, slots, personal values and their
variants, the field inventory), which the key pass would build and drop. This walk follows the
same decisions in the same order (``slots.case_slots`` for which strings are verbatim, JSON or
text; ``scan_case`` for how a JSON leaf is owned) and builds nothing else;
``tests/redaction/test_hot_path_equivalence.py`` checks it returns exactly the scan's keys.

A shard repeats much of its text (a tool's reply, a status message: about 45% of the JSON fields
and 90% of the texts key patterns search, in the generator's shards), and what the walk finds in
one JSON field or one text depends on that text alone. ``WalkMemo`` keeps it for the cases of one
shard, so a repeated text is replayed (the same calls in the same order), not walked again.
"""

from __future__ import annotations

import re
from typing import Any

from golden_distill.redaction.case_scan import BUSINESS_ID, identifier_shaped
from golden_distill.redaction.key_rules import KeyRule, NonPersonalRule, PiiRule, Rule, RuleMatcher
from golden_distill.redaction.slots import HASH_ID, JSON_FIELDS, SKIPPED, VERBATIM
from golden_distill.redaction.walker import _NOT_JSON, leaves_and_keys, parse_json

_VISITED = (dict, list, str)

#: What one JSON field contributes: (key, rule) in the order seen, unowned leaves,
#: identifier-shaped unknown values, object keys. ``None``: the text is not JSON.
_JsonFinds = tuple[tuple[tuple[str, KeyRule], ...], list[str], list[str], list[str]] | None


class WalkMemo:
    """What the walk found per JSON field text and per searched text, for the cases of one
    shard (``KeyScanner.digests`` makes one per call; it grows with the shard's distinct
    texts and is dropped with it)."""

    __slots__ = ("json", "matches", "rules")

    def __init__(self) -> None:
        self.json: dict[str, _JsonFinds] = {}
        self.matches: dict[str, tuple[tuple[str, KeyRule], ...]] = {}
        #: the rule of each key path (``RuleMatcher`` caches only paths a rule may name:
        #: the others, most of a shard's JSON leaves, were matched again at every leaf)
        self.rules: dict[tuple[str, ...], Rule | None] = {}

    def rule(self, matcher: RuleMatcher, path: tuple[str, ...]) -> Rule | None:
        try:
            return self.rules[path]
        except KeyError:
            found = self.rules[path] = matcher.match(path)
            return found


class _KeyWalk:
    """One case's walk: keys in the order ``scan_case`` adds them (the first rule a value is
    seen under is its rule), and the texts key text patterns search, in the scan's order."""

    __slots__ = ("body", "json_keys", "keys", "matcher", "memo", "misfits", "unknown")

    def __init__(self, matcher: RuleMatcher, memo: WalkMemo | None = None) -> None:
        self.matcher = matcher
        self.memo = memo
        self.keys: dict[str, KeyRule] = {}
        self.misfits: list[str] = []  # verbatim fields that do not fit their shape
        self.body: list[str] = []  # text slots and unowned JSON leaves, in slot order
        self.json_keys: list[str] = []  # object keys of JSON slots
        self.unknown: list[str] = []

    def add_key(self, value: str, rule: KeyRule) -> None:
        if value and value not in self.keys:
            self.keys[value] = rule

    def visit(self, value: Any, pattern: str, name: Any) -> None:
        """``slots._SlotWalk.visit`` without copies, setters or locations."""
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, _VISITED):
                    self.visit(v, f"{pattern}.{k}", k)
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, _VISITED):
                    self.visit(v, pattern, name)
        elif isinstance(value, str) and value:
            shape = VERBATIM.get(pattern)
            if shape is not None:
                if not HASH_ID.match(value) and not shape.match(value):
                    self.misfits.append(value)
                return
            if name in JSON_FIELDS:
                if self.memo is not None:
                    self.json_field_memo(value, self.memo.json)
                    return
                parsed = parse_json(value)
                if parsed is not _NOT_JSON:
                    self.json_slot(parsed)
                    return
            self.body.append(value)

    def json_field_memo(self, value: str, seen: dict[str, _JsonFinds]) -> None:
        """A JSON field's finds (``json_slot``), walked once per distinct text and replayed."""
        try:
            finds = seen[value]
        except KeyError:
            parsed = parse_json(value)
            if parsed is _NOT_JSON:
                finds = None
            else:
                part = _KeyWalk(self.matcher, self.memo)
                part.json_slot(parsed)
                finds = (tuple(part.keys.items()), part.body, part.unknown, part.json_keys)
            seen[value] = finds
        if finds is None:
            self.body.append(value)
            return
        keys, body, unknown, json_keys = finds
        for key, rule in keys:
            self.add_key(key, rule)
        self.body.extend(body)
        self.unknown.extend(unknown)
        self.json_keys.extend(json_keys)

    def json_slot(self, parsed: Any) -> None:
        """``scan_case``'s leaf loop, keeping only what decides keys."""
        leaves, keys = leaves_and_keys(parsed)
        memo, matcher = self.memo, self.matcher
        for path, leaf in leaves:
            rule = matcher.match(path) if memo is None else memo.rule(matcher, path)
            is_text = isinstance(leaf, str)
            if isinstance(rule, NonPersonalRule) and (not is_text or BUSINESS_ID.match(leaf)):
                continue
            if isinstance(rule, KeyRule):
                self.add_key(str(leaf), rule)
                continue
            if isinstance(rule, PiiRule) and rule.owns(path, leaf):
                continue
            if is_text:
                self.body.append(leaf)
                if identifier_shaped(leaf):
                    self.unknown.append(leaf.strip())
            elif isinstance(leaf, int) and len(str(abs(leaf))) >= 6:
                digits = str(leaf)
                self.body.append(digits)
                self.unknown.append(digits)
        self.json_keys.extend(keys)


def case_keys(
    row: dict[str, Any],
    *,
    matcher: RuleMatcher,
    column_keys: dict[str, KeyRule],
    text_patterns: list[tuple[re.Pattern[str], KeyRule]],
    memo: WalkMemo | None = None,
) -> tuple[dict[str, KeyRule], list[str]]:
    """(original key -> its rule, identifier-shaped values no rule classifies) of one case:
    ``scan_case(row, ...).index.keys`` and ``.unknown_ids``. ``memo``: the same result, with
    texts seen in earlier cases of the shard replayed."""
    walk = _KeyWalk(matcher, memo)
    for column, rule in column_keys.items():
        value = row.get(column)
        if value:
            walk.add_key(str(value), rule)
    skip = set(column_keys) | SKIPPED
    for column, value in row.items():
        if column not in skip:
            walk.visit(value, column, column)
    if text_patterns:
        for texts in (walk.misfits, walk.body, walk.json_keys):
            for text in texts:
                if memo is None:
                    found = _pattern_keys(text, text_patterns)
                else:
                    found = memo.matches.get(text)
                    if found is None:
                        found = memo.matches[text] = _pattern_keys(text, text_patterns)
                for key, rule in found:
                    walk.add_key(key, rule)
    return walk.keys, walk.unknown


def _pattern_keys(
    text: str, text_patterns: list[tuple[re.Pattern[str], KeyRule]]
) -> tuple[tuple[str, KeyRule], ...]:
    """Every key text pattern's matches in ``text``, pattern by pattern, in order."""
    return tuple(
        (m.group(0), rule) for pattern, rule in text_patterns for m in pattern.finditer(text)
    )
