"""A case's field inventory: handling per tool and path, what the scanner found there and, for
a refused case, where the verifier found something (counts and entity types, never values)."""

from __future__ import annotations

from collections import Counter

from golden_distill.redaction.case_scan import CaseScan
from golden_distill.redaction.findings_cache import FindingsCache
from golden_distill.redaction.inventory import FieldKey, safe_path, tool_and_path
from golden_distill.redaction.propagation import Propagator
from golden_distill.redaction.verify import ScrubbedField
from golden_distill.redaction.walker import iter_leaves, parse_json


def case_inventory(scan: CaseScan, findings: FindingsCache, threshold: float) -> Counter[FieldKey]:
    """The case's field inventory: handling per path plus entity types found there."""
    fields = Counter(scan.fields)
    found = findings([text for _, _, text in scan.scanned])
    for tool, where, text in scan.scanned:
        for f in found.get(text, ()):
            if f.score >= threshold:
                fields[(tool, where, "found:" + f.entity_type)] += 1
    return fields


def verifier_fields(
    scan: CaseScan,
    scrubbed: list[ScrubbedField],
    prop: Propagator,
    findings: FindingsCache,
    threshold: float,
) -> Counter[FieldKey]:
    """Where the verifier found something (only for a refused case: counts, no values)."""
    out: Counter[FieldKey] = Counter()
    leaves: list[tuple[str, str, str]] = []
    for (slot, _), new in zip(scan.slots, scrubbed, strict=True):
        tool, base = tool_and_path(slot.location, scan.step_names, ())
        if new.was_json:
            parsed = parse_json(new.text)
            for path, leaf in iter_leaves(parsed):
                if isinstance(leaf, str):
                    leaves.append((tool, safe_path(base, path), leaf))
        else:
            leaves.append((tool, base, new.text))
    for v in scan.verbatim:
        tool, where = tool_and_path(v.location, scan.step_names, ())
        leaves.append((tool, where, v.text))
    found = findings.verify([text for _, _, text in leaves])
    for tool, where, text in leaves:
        for f in found.get(text, ()):
            span = text[f.start : f.end]
            if f.score >= threshold and not any(span in sub for sub in prop.emitted):
                out[(tool, where, "verifier:" + f.entity_type)] += 1
    return out
