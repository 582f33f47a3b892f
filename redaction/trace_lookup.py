"""Following a replay diff back to production: a raw trace id -> its pseudonym -> the cases.

Published cases carry keyed pseudonyms of their trace ids (``redaction.key_fields``: the column
``trace_id`` is a key), so a ``regression_diff_result`` row names a trace no production log
knows. Whoever holds the pseudonym key can go the other way for one id they already have:
compute that id's pseudonyms (``key_pseudonym``, as redaction did, for each key type and the
widened forms) and find the cases whose ``trace_id`` is one of them. Nothing is reversed:
without the raw id and the key nothing is learned.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from golden_distill.datasets.reader import GoldenSet
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.pseudonym import key_pseudonym

#: Widened forms tried (redaction/collisions.py widens by a digit or two, almost never more).
WIDENINGS = 3


def trace_pseudonyms(raw: str, secret: bytes, redaction: RedactionConfig) -> list[str]:
    """The forms ``raw`` may take in a set published with this key and config, the trace key
    type's pseudonym first: a value has one pseudonym per case, and when the same id is also
    another key of its case (tau2 and chat sources use the run id as the session id too) it may
    carry that key type's; so every key type is tried, each widened as redaction may. ``raw``
    itself too (a set published without pseudonymised trace ids)."""
    fields = sorted(redaction.key_fields, key=lambda f: "trace_id" not in f.columns)
    forms: list[str] = []
    for key_field in fields:
        for widen in range(WIDENINGS):
            form = key_pseudonym(raw, key_field.key_type, secret, key_field.prefix, widen)
            if form not in forms:
                forms.append(form)
    return [*forms, raw]


@dataclass(frozen=True, slots=True)
class TraceMatch:
    case_id: str
    trace_id: str  # as published (the pseudonym)


def find_trace(golden: GoldenSet, published_forms: list[str]) -> list[TraceMatch]:
    """The cases of ``golden`` whose trace id is one of ``published_forms``."""
    table = golden.read_table().select(["case_id", "trace_id"])
    forms = pa.array(published_forms, type=pa.string())
    hits = table.filter(pc.is_in(table.column("trace_id"), value_set=forms))
    return [TraceMatch(r["case_id"], r["trace_id"]) for r in hits.to_pylist()]
