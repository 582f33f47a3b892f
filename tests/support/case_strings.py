"""Every string the redaction scanner sees in a case: verbatim fields, plain text slots, and the
leaves and object keys of JSON slots (what shortcut and pre-filter tests check against)."""

from __future__ import annotations

from typing import Any

from golden_distill.redaction.slots import case_slots
from golden_distill.redaction.walker import leaves_and_keys


def case_strings(row: dict[str, Any]) -> list[str]:
    _, slots, verbatim = case_slots(row)
    out = [v.text for v in verbatim]
    for slot, _put in slots:
        if slot.is_json:
            leaves, keys = leaves_and_keys(slot.parsed)
            out.extend(str(v) for _, v in leaves)
            out.extend(keys)
        else:
            out.append(slot.text)
    return out
