"""The key pass's own walk over a case: only what decides its original keys.

``KeyScanner.keys`` needs the set of (original, rule) a case's redaction could pseudonymise:
key columns, leaves a key rule owns, key text patterns in scanned text, and identifier-shaped
values no rule classifies. ``case_scan.scan_case`` finds the same set on the way to everything
redaction needs (a copy of the row with setters per slot, slots, personal values and their
variants, the field inventory), which the key pass would build and drop. This walk follows the
same decisions in the same order (``slots.case_slots`` for which strings are verbatim, JSON or
text; ``scan_case`` for how a JSON leaf is owned) and builds nothing else;
``tests/redaction/test_key_walk.py`` checks it returns exactly the scan's keys.
"""

from __future__ import annotations

import re
from typing import Any

from golden_distill.redaction.case_scan import BUSINESS_ID, identifier_shaped
from golden_distill.redaction.key_rules import KeyRule, NonPersonalRule, PiiRule, RuleMatcher
from golden_distill.redaction.slots import HASH_ID, JSON_FIELDS, SKIPPED, VERBATIM
from golden_distill.redaction.walker import _NOT_JSON, leaves_and_keys, parse_json

_VISITED = (dict, list, str)


class _KeyWalk:
    """One case's walk: keys in the order ``scan_case`` adds them (the first rule a value is
    seen under is its rule), and the texts key text patterns search, in the scan's order."""

    __slots__ = ("body", "json_keys", "keys", "matcher", "misfits", "unknown")

    def __init__(self, matcher: RuleMatcher) -> None:
        self.matcher = matcher
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
                parsed = parse_json(value)
                if parsed is not _NOT_JSON:
                    self.json_slot(parsed)
                    return
            self.body.append(value)

    def json_slot(self, parsed: Any) -> None:
        """``scan_case``'s leaf loop, keeping only what decides keys."""
        leaves, keys = leaves_and_keys(parsed)
        match = self.matcher.match
        for path, leaf in leaves:
            rule = match(path)
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
) -> tuple[dict[str, KeyRule], list[str]]:
    """(original key -> its rule, identifier-shaped values no rule classifies) of one case:
    ``scan_case(row, ...).index.keys`` and ``.unknown_ids``."""
    walk = _KeyWalk(matcher)
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
                for pattern, rule in text_patterns:
                    for m in pattern.finditer(text):
                        walk.add_key(m.group(0), rule)
    return walk.keys, walk.unknown
