"""Quarantine: where records that cannot become (or stay) cases go, so nothing is silently lost.

Each entry is one JSON line: the stage that rejected it, a reason code (counted per reason in the
run report), the source location (URI + line/row), a short detail written by *us* (never a copy of
record text), and optionally the raw record so it can be fixed and replayed. The raw record may
hold personal data: a quarantine file has the access class of the source it came from and is never
written to the golden store. Log lines and exceptions mention only the location and reason.
"""

from __future__ import annotations

import base64
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

# Reason codes used by readers. Keep them short, stable and documented: reports group by them.
INVALID_JSON = "invalid_json"
NOT_AN_OBJECT = "not_an_object"
MISSING_FIELD = "missing_field"
WRONG_TYPE = "wrong_type"
OVERSIZED_LINE = "oversized_line"
TRUNCATED_STREAM = "truncated_stream"
ENCODING_ERROR = "encoding_error"
ORPHAN_TOOL_REPLY = "orphan_tool_reply"
ORPHAN_CALL = "orphan_call"
NULL_REQUIRED = "null_required"
NO_TRACE_ID = "no_trace_id"


@dataclass(slots=True)
class QuarantineEntry:
    stage: str
    reason: str
    uri: str
    position: int | None
    detail: str
    case_id: str | None = None
    raw: str | bytes | None = None

    def to_json(self, keep_raw: bool) -> bytes:
        record: dict[str, Any] = {
            "stage": self.stage,
            "reason": self.reason,
            "uri": self.uri,
            "position": self.position,
            "detail": self.detail,
        }
        if self.case_id is not None:
            record["case_id"] = self.case_id
        if keep_raw and self.raw is not None:
            if isinstance(self.raw, bytes):
                try:
                    record["raw"] = self.raw.decode("utf-8")
                except UnicodeDecodeError:
                    record["raw_base64"] = base64.b64encode(self.raw).decode("ascii")
            else:
                record["raw"] = self.raw
        return orjson.dumps(record) + b"\n"


@dataclass
class Quarantine:
    """Collects rejected records: counts always, a JSONL file when ``path`` is given.

    ``keep_raw`` keeps the rejected record's text in the file (default) so nothing is lost; turn
    it off where the quarantine must not hold source text at all (the counts and locations stay).
    """

    path: Path | None = None
    keep_raw: bool = True
    counts: Counter[str] = field(default_factory=Counter)
    _fh: IO[bytes] | None = field(default=None, init=False, repr=False)

    def add(self, entry: QuarantineEntry) -> None:
        self.counts[entry.reason] += 1
        if self.path is None:
            return
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("ab")
        self._fh.write(entry.to_json(self.keep_raw))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> Quarantine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_quarantine(path: Path) -> list[dict[str, Any]]:
    """All entries of a quarantine file (for tests, reports and replays of fixed records)."""
    if not path.exists():
        return []
    with path.open("rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]


#: Quarantine reasons a setting can turn into read cases: reason -> what to change. Summaries
#: (`golden ingest`, `golden preview`, the run report) print it next to the count, so a whole
#: family of records quarantined for a known, fixable reason says how to keep it.
QUARANTINE_HINTS: dict[str, str] = {
    "malformed_arguments": (
        "tool arguments that are not JSON; set ingest.malformed_arguments: python_literal to "
        "read Python-literal arguments ({'thought': ...}) with ast.literal_eval, or "
        "keep_as_string to keep the text"
    ),
}


def quarantine_hint(reason: str) -> str | None:
    """The setting that would keep records quarantined for ``reason``, if there is one."""
    return QUARANTINE_HINTS.get(reason)
