"""The structural pass over one case: every leaf is owned by a rule or collected for scanning.

Default deny: each string and number leaf of every field (``slots.case_slots``), object keys
included, is a key field (pseudonymised), owned by a key-name rule or key-name evidence (a
personal value whatever its shape), a business id with a fitting shape, or scanned as free text;
identifier-shaped values no rule classifies are unknown identifiers (``redaction.
unknown_identifiers``). Verbatim fields that do not fit their declared shape are scanned too.
The pass also records the case's field inventory (``inventory.py``: counts, never values).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.inventory import FieldKey, safe_path, tool_and_path
from golden_distill.redaction.key_rules import (
    KeyRule,
    NonPersonalRule,
    PiiRule,
    RuleMatcher,
    person_tool,
)
from golden_distill.redaction.propagation import ValueIndex
from golden_distill.redaction.recognizers.json_numbers import personal_float
from golden_distill.redaction.recognizers.name_parts import widened_names
from golden_distill.redaction.slots import Slot, Verbatim, case_slots
from golden_distill.redaction.walker import leaves_and_keys

_SHORT_NUMBER = re.compile(r"^[\d\s.,:/+-]*$")
_ID_CHARS = re.compile(r"^[A-Za-z0-9_.:/#+@-]+$")
BUSINESS_ID = re.compile(r"^[A-Za-z0-9_.:/#-]{1,64}$")
_DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")
_AMOUNT_LIKE = re.compile(r"^[-+]?[\d,]*\.\d+$|^v?\d+(?:\.\d+)+$")
#: Clock times and durations ("20:00:00", "07:30", "03:00:00+1" the next day, "PT1H30M"): values,
#: not ids.
_TIME_LIKE = re.compile(
    r"^\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[+-]\d{1,2})?$|^P(?:\d+[YMWD])*(?:T(?:\d+[HMS])+)?$"
)
#: A quantity with a unit ("1000ml", "6.1-inch", "15-inch", "500GB", "2.5 kg"): a catalogue
#: option, never a key. Only known units, so an id such as "1234ab" is still an identifier.
_QUANTITY = re.compile(
    r"^[-+]?\d{1,6}(?:[.,]\d{1,3})?[- ]?(?:ml|cl|dl|l|ltr|liters?|litres?|oz|fl ?oz|g|mg|kg|lbs?"
    r"|in|inch|inches|ft|feet|cm|mm|m|km|mi|miles?|yd|gb|tb|mb|kb|w|kw|kwh|v|mah|hz|khz|mhz|ghz"
    r"|mp|px|dpi|rpm|pcs|pack|pc|ct|count|x|k|p|hrs?|hours?|mins?|minutes?|secs?|seconds?|days?"
    r"|weeks?|months?|years?|°?[cf]|%)$",
    re.IGNORECASE,
)
#: A leaf's inventory path per (slot base, key path): the same few paths recur in every case.
_leaf_path = lru_cache(maxsize=1 << 16)(safe_path)


def _nowhere(*_: object) -> tuple[str, str]:
    return "", ""


def _no_path(*_: object) -> str:
    return ""


def identifier_shaped(value: str) -> bool:
    """6+ digits, or letters mixed with 2+ digits in one 6+ character token; dates, clock times,
    durations, amounts, versions and quantities with a unit are not identifiers (pseudonymising
    them in kind made impossible times such as "26:96:16" and scrambled "1000ml" into "6012mx")."""
    value = value.strip()
    if not 6 <= len(value) <= 64 or not _ID_CHARS.match(value):
        return False
    digits = sum(c.isdigit() for c in value)
    if digits < 2 or _DATE_LIKE.match(value) or _AMOUNT_LIKE.match(value):
        return False
    if _TIME_LIKE.match(value) or _QUANTITY.match(value):
        return False
    return digits >= 6 or any(c.isalpha() for c in value)


def _propagatable(value: Any) -> bool:
    """Structured values that are ordinary lowercase words ("mobile", "home") stay local."""
    text = str(value)
    return not (text.isascii() and text.isalpha() and text.islower())


@dataclass(slots=True)
class CaseScan:
    """A case after the structural pass, waiting for free-text findings."""

    row: dict[str, Any]
    slots: list[tuple[Slot, Callable[[str], None]]]
    index: ValueIndex
    free_texts: list[str]
    numeric_slots: set[int]
    non_personal: set[str]
    verbatim: list[Verbatim] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    absorbed: bool = False
    fields: Counter[FieldKey] = field(default_factory=Counter)
    scanned: list[tuple[str, str, str]] = field(default_factory=list)
    step_names: list[str] = field(default_factory=list)


def scan_case(
    row: dict[str, Any],
    *,
    config: RedactionConfig,
    secret: bytes,
    matcher: RuleMatcher,
    column_keys: dict[str, KeyRule],
    text_patterns: list[tuple[re.Pattern[str], KeyRule]],
    inventory: bool = True,
) -> CaseScan:
    """Structural pass over every leaf: key fields, key rules, key-name evidence, unknown
    identifiers, key text patterns; everything no rule owns is collected as free text.
    ``inventory=False`` (the key pass): no tool names or paths for the field inventory."""
    locate = tool_and_path if inventory else _nowhere
    leaf_path = _leaf_path if inventory else _no_path
    row, slots, verbatim = case_slots(row, column_keys)
    index = ValueIndex(secret, config.min_propagation_length, config.min_name_length)
    for column, rule in column_keys.items():
        value = row.get(column)
        if value:
            index.add_key(str(value), rule)
    free_texts: list[str] = [v.text for v in verbatim if not v.fits]
    numeric_slots: set[int] = set()
    non_personal: set[str] = set()
    unknown: list[str] = []
    key_texts: list[str] = []
    fields: Counter[FieldKey] = Counter()
    scanned: list[tuple[str, str, str]] = []  # (tool, path, text): findings counted later
    step_names = [str(s.get("name") or "") for s in row.get("steps") or []]
    # names under a generic evidence key ("name") whose context said nothing about whose name it
    # is: personal unless the same value sits in a product's, a tool's... context elsewhere in
    # the case (the message history repeats tool responses without their tool's name)
    guessed: list[tuple[str, bool, bool]] = []
    declined: set[str] = set()
    # the case's own tool names: verbatim in steps[].name, so verbatim wherever they recur
    # (an OpenAI message's `name` on a tool reply is the tool's, not a person's)
    tool_names = frozenset(n for n in step_names if n)
    for v in verbatim:
        tool, where = locate(v.location, step_names, ())
        fields[(tool, where, "verbatim" if v.fits else "verbatim_misfit")] += 1
        if not v.fits:
            scanned.append((tool, where, v.text))
    matcher = matcher
    for i, (slot, _) in enumerate(slots):
        if not slot.is_json:
            free_texts.append(slot.text)
            tool, where = locate(slot.location, step_names, ())
            fields[(tool, where, "scanned")] += 1
            scanned.append((tool, where, slot.text))
            continue
        tool, base = locate(slot.location, step_names, ())
        leaves, keys = leaves_and_keys(slot.parsed)
        for path, leaf in leaves:
            where = leaf_path(base, path)
            rule = matcher.match(path)
            is_text = isinstance(leaf, str)
            if is_text and leaf in tool_names:
                non_personal.add(leaf)
                fields[(tool, where, "non_personal")] += 1
                continue
            if rule is not None:  # most leaves: no rule (skip the three type checks)
                if isinstance(rule, NonPersonalRule) and (not is_text or BUSINESS_ID.match(leaf)):
                    non_personal.add(str(leaf))
                    fields[(tool, where, "non_personal")] += 1
                    continue
                if isinstance(rule, KeyRule):
                    if not is_text:
                        numeric_slots.add(i)
                    index.add_key(str(leaf), rule)
                    fields[(tool, where, "key_field")] += 1
                    continue
                if isinstance(rule, PiiRule) and rule.owns(path, leaf, tool):
                    if not is_text:
                        amount = isinstance(leaf, float) and not personal_float(path, leaf)
                        if amount or (rule.evidence and abs(leaf) < 1000):
                            fields[(tool, where, "non_personal")] += 1
                            continue  # amounts and small counts under evidence keys
                        numeric_slots.add(i)
                    # a short number under an evidence key (a ledger "account": "4000") is
                    # replaced where it is, never searched for inside amounts elsewhere
                    text = str(leaf)
                    propagate = _propagatable(leaf) and not (
                        rule.evidence
                        and _SHORT_NUMBER.match(text)
                        and sum(c.isdigit() for c in text) < 6
                    )
                    # a generic evidence key ("name") seeds the batch's name dictionary only
                    # in a tool about people: elsewhere it may name a product or a place
                    share = not rule.evidence or person_tool(tool)
                    if rule.evidence and rule.entity_type == "PERSON":
                        guessed.append((text, propagate, share))  # decided after the walk
                    else:
                        index.add_pii(text, rule.entity_type, propagate=propagate, share=share)
                    fields[(tool, where, "evidence" if rule.evidence else "rule")] += 1
                    continue
                if is_text and isinstance(rule, PiiRule) and rule.evidence:
                    declined.add(leaf.strip().casefold())  # a product's or a tool's "name"
            # no rule owns it: scanned, and identifier-shaped values are unknown ids
            if is_text:
                free_texts.append(leaf)
                scanned.append((tool, where, leaf))
                if identifier_shaped(leaf):
                    unknown.append(leaf.strip())
                    fields[(tool, where, "unknown_id")] += 1
                else:
                    fields[(tool, where, "scanned")] += 1
            elif isinstance(leaf, float) and (entity := personal_float(path, leaf)):
                # a card as a float, a coordinate under a lat/lon key (recognizers/json_numbers)
                index.add_pii(str(leaf), entity)
                numeric_slots.add(i)
                fields[(tool, where, "scanned")] += 1
            elif isinstance(leaf, int) and len(str(abs(leaf))) >= 6:
                digits = str(leaf)
                free_texts.append(digits)
                scanned.append((tool, where, digits))
                unknown.append(digits)
                numeric_slots.add(i)
                fields[(tool, where, "unknown_id")] += 1
        for k in keys:
            key_texts.append(k)
            scanned.append((tool, base + ".<keys>", k))
    for text, propagate, share in guessed:
        if text.strip().casefold() in declined:
            free_texts.append(text)  # reference data: scanned like any unowned text
        else:
            index.add_pii(text, "PERSON", propagate=propagate, share=share)
    free_texts.extend(key_texts)  # object keys are scanned too ("客户欧阳娜娜": ...)
    for text in free_texts:  # ids also hide in keys ("order:ORD-1": ...)
        for pattern, rule in text_patterns:
            for m in pattern.finditer(text):
                index.add_key(m.group(0), rule)
    scan = CaseScan(row, slots, index, free_texts, numeric_slots, non_personal, verbatim, unknown)
    scan.fields, scan.scanned, scan.step_names = fields, scanned, step_names
    return scan


def widen_known_names(scan: CaseScan) -> None:
    """Known names that are part of a longer name in the case's free text make that longer
    name known too ("Núñez" under a key, "José Ángel Núñez" in a message): the given names go
    with the surname (``name_parts.py``)."""
    index = scan.index
    names = [v for k, v in index.pii_spelling.items() if index.pii.get(k) == "PERSON"]
    for name in widened_names(names, scan.free_texts):
        index.add_pii(name, "PERSON")
