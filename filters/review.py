"""The human review loop: decisions on published cases, kept in a log beside the set.

``<set>/_review/log.jsonl`` (in the golden store) holds one JSON line per decision:
``case_id``, ``exact_hash`` (the case's normalised-content hash from dedup, so the same run
recorded again is recognised), ``decision`` (``confirm`` | ``reject`` | ``correct``), ``reason``,
``expected_final_state`` / ``expected_actions`` (a correction), ``reviewer`` and ``at``. The
next version applies them: rejected cases never come back (matched by case id and by content
hash), corrected expectations replace the derived ones, confirmed cases are ``trust: human``.
A later decision on the same case replaces an earlier one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson
import polars as pl

DECISIONS = ("confirm", "reject", "correct")


def log_path(set_name: str) -> str:
    return f"{set_name}/_review/log.jsonl"


def parse_log(data: bytes | None) -> list[dict[str, Any]]:
    if not data:
        return []
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def log_lines(entries: list[dict[str, Any]], at: str) -> bytes:
    """The bytes ``entries`` (from ``check_row``) append to the log, each stamped ``at``: one
    sorted-key JSON line per decision. `golden review import` and the review page both write
    through this, so the next run reads their decisions alike."""
    return b"".join(
        orjson.dumps({**entry, "at": at}, option=orjson.OPT_SORT_KEYS) + b"\n" for entry in entries
    )


def log_digest(data: bytes | None) -> str:
    """A digest of the log: part of a run's key, so a new decision makes a new version."""
    return hashlib.sha256(data or b"").hexdigest()


@dataclass(slots=True)
class ReviewDecisions:
    """The latest decision per case, indexed for the flow."""

    rejected_ids: dict[str, str] = field(default_factory=dict)  # case_id -> reason
    rejected_hashes: dict[str, str] = field(default_factory=dict)  # exact_hash -> reason
    confirmed: set[str] = field(default_factory=set)
    corrections: dict[str, dict[str, Any]] = field(default_factory=dict)  # case_id -> expected

    @classmethod
    def from_entries(cls, entries: list[dict[str, Any]]) -> ReviewDecisions:
        latest: dict[str, dict[str, Any]] = {}
        for entry in sorted(entries, key=lambda e: str(e.get("at") or "")):
            latest[entry["case_id"]] = entry
        out = cls()
        for case_id, entry in latest.items():
            decision = entry.get("decision")
            if decision == "reject":
                reason = entry.get("reason") or "rejected in review"
                out.rejected_ids[case_id] = reason
                if entry.get("exact_hash"):
                    out.rejected_hashes[entry["exact_hash"]] = reason
            elif decision == "confirm":
                out.confirmed.add(case_id)
            elif decision == "correct":
                out.confirmed.add(case_id)
                out.corrections[case_id] = {
                    "final_state": entry.get("expected_final_state"),
                    "actions": entry.get("expected_actions"),
                }
        return out


def check_row(row: dict[str, Any], line: int) -> dict[str, Any] | None:
    """A review-sheet row as a log entry (None when no decision was filled in); a clear error
    naming the line for a bad one."""
    decision = (row.get("decision") or "").strip().lower()
    if not decision:
        return None
    if decision not in DECISIONS:
        raise ValueError(f"line {line}: decision {decision!r}; use one of {', '.join(DECISIONS)}")
    if not (row.get("case_id") or "").strip():
        raise ValueError(f"line {line}: case_id is empty")
    if decision == "reject" and not (row.get("reason") or "").strip():
        raise ValueError(f"line {line}: a rejection needs a reason")
    actions = (row.get("corrected_actions") or "").strip() or None
    if actions is not None:
        try:
            orjson.loads(actions)
        except orjson.JSONDecodeError:
            raise ValueError(f"line {line}: corrected_actions is not JSON") from None
    state = (row.get("corrected_final_state") or "").strip() or None
    if decision == "correct" and state is None and actions is None:
        raise ValueError(f"line {line}: a correction needs corrected_final_state or _actions")
    if not (row.get("reviewer") or "").strip():
        raise ValueError(f"line {line}: reviewer is empty")
    return {
        "case_id": row["case_id"].strip(),
        "exact_hash": (row.get("exact_hash") or "").strip() or None,
        "decision": decision,
        "reason": (row.get("reason") or "").strip() or None,
        "expected_final_state": state,
        "expected_actions": actions,
        "reviewer": row["reviewer"].strip(),
    }


def page_entry(
    form: dict[str, str], case_id: str, exact_hash: str | None, reviewer: str
) -> dict[str, Any]:
    """A decision made on the review page as a log entry: the form is read as a sheet row
    (``check_row``), so it is checked and written exactly as `golden review import` would."""
    row = {
        "case_id": case_id,
        "exact_hash": exact_hash or "",
        "decision": form.get("decision", ""),
        "reason": form.get("reason", ""),
        "corrected_final_state": form.get("corrected_final_state", ""),
        "corrected_actions": form.get("corrected_actions", ""),
        "reviewer": reviewer,
    }
    try:
        entry = check_row(row, 1)
    except ValueError as exc:  # the page has no lines: the message without "line 1: "
        raise ValueError(str(exc).removeprefix("line 1: ")) from None
    if entry is None:
        raise ValueError("no decision given")
    return entry


def corrected_expected(frame: pl.DataFrame) -> pl.Expr | None:
    """The ``expected`` column with reviewers' corrections applied (``_expected_final_state``,
    ``_expected_actions`` JSON text, set for corrected cases): the corrected parts replace the
    derived ones and ``source`` becomes ``review``. None when the frame has no ``expected``
    column (a schema without it) or no corrections."""
    dtype = frame.schema.get("expected")
    if not isinstance(dtype, pl.Struct) or "_expected_final_state" not in frame.columns:
        return None
    fields = {f.name: f.dtype for f in dtype.fields}
    old = pl.col("expected").struct
    corrected = (
        pl.col("_expected_final_state").is_not_null() | pl.col("_expected_actions").is_not_null()
    )
    parts = []
    for name, field_type in fields.items():
        value = old.field(name)
        if name == "final_state":
            value = pl.coalesce(pl.col("_expected_final_state"), value)
        elif name == "actions":
            decoded = pl.col("_expected_actions").str.json_decode(field_type)
            value = (
                pl.when(pl.col("_expected_actions").is_not_null()).then(decoded).otherwise(value)
            )
        elif name == "source":
            value = pl.lit("review", dtype=field_type)
        parts.append(value.cast(field_type).alias(name))
    return pl.when(corrected).then(pl.struct(parts)).otherwise(pl.col("expected")).alias("expected")
