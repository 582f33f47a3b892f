"""Quarantine: where records that cannot become (or stay) cases go, so nothing is silently lost.

Each entry is one JSON line: the stage that rejected it, a reason code (counted per reason in the
run report), the source location (URI + line/row), a short detail written by *us* (never a copy of
record text), and optionally the raw record so it can be fixed and replayed. The raw record may
hold personal data: a quarantine file has the access class of the source it came from and is never
written to the golden store. Log lines and exceptions mention only the location and reason.

Bounded, never silent: a reader fed the wrong format rejects every line, and a quarantine that
copied each one would outgrow its input. So a ``Quarantine`` can (``ingest.*`` settings)

* keep at most ``raw_bytes`` of a record's text (the excerpt; the entry then says the record's
  full length and sha256, and its location finds the rest in the source);
* write at most ``max_entries`` entries per input; the others are counted like every entry, and
  one closing *summary line* per input (``"summary": true``) says how many were not written and
  why, so the counts still account for every record;
* stop a reader after ``max_consecutive`` rejected records in a row without an accepted one
  (``QuarantineStreak``): that is a wrong ``--format`` or a damaged input, not bad records.
"""

from __future__ import annotations

import base64
import hashlib
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

    def to_json(self, keep_raw: bool, raw_bytes: int | None = None) -> bytes:
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
            raw = self.raw if isinstance(self.raw, bytes) else self.raw.encode("utf-8")
            if raw_bytes is not None and len(raw) > raw_bytes:
                record["raw_bytes"] = len(raw)
                record["raw_sha256"] = hashlib.sha256(raw).hexdigest()
                raw = raw[:raw_bytes]
                record["raw_truncated"] = True
            try:
                record["raw"] = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if record.get("raw_truncated") and exc.start >= len(raw) - 3:
                    record["raw"] = raw[: exc.start].decode("utf-8")  # cut inside a character
                else:
                    record["raw_base64"] = base64.b64encode(raw).decode("ascii")
        return orjson.dumps(record) + b"\n"


class QuarantineStreak(RuntimeError):
    """A reader met ``count`` rejected records in a row (``max_consecutive``): the input is
    not in the format it is read as, or is damaged. The message names the input and the
    reasons, never record text; the readers' callers add a format hint."""

    def __init__(self, uri: str, count: int, reasons: Counter[str]) -> None:
        self.uri = uri
        self.count = count
        self.reasons = reasons
        top = ", ".join(f"{reason} {n:,}" for reason, n in reasons.most_common(3))
        super().__init__(
            f"stopped reading after {count:,} records in a row could not be read ({top}); "
            "is it in the format it is read as?"
        )


@dataclass
class Quarantine:
    """Collects rejected records: counts always, a JSONL file when ``path`` is given.

    ``keep_raw`` keeps the rejected record's text in the file (default) so nothing is lost; turn
    it off where the quarantine must not hold source text at all (the counts and locations stay).
    ``raw_bytes``, ``max_entries`` and ``max_consecutive`` bound it (module doc; ``None``/0: no
    bound). Readers call ``accepted()`` for each record they turn into a case.
    """

    path: Path | None = None
    keep_raw: bool = True
    raw_bytes: int | None = None
    max_entries: int = 0
    max_consecutive: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    _fh: IO[bytes] | None = field(default=None, init=False, repr=False)
    _total: int = field(default=0, init=False, repr=False)
    _streak: Counter[str] = field(default_factory=Counter, init=False, repr=False)
    _written: Counter[str] = field(default_factory=Counter, init=False, repr=False)
    _unwritten: dict[str, Counter[str]] = field(default_factory=dict, init=False, repr=False)

    def add(self, entry: QuarantineEntry, record: bool = True) -> None:
        """Count and write ``entry``. ``record=False``: a rejected row that is not a record on
        its own (an evidence call without its trace): it does not extend a run of rejected
        records."""
        self.counts[entry.reason] += 1
        self._total += 1
        if record:
            self._streak[entry.reason] += 1
        if self.path is not None:
            if self.max_entries and self._written[entry.uri] >= self.max_entries:
                self._unwritten.setdefault(entry.uri, Counter())[entry.reason] += 1
            else:
                self._written[entry.uri] += 1
                self._write(entry.to_json(self.keep_raw, self.raw_bytes))
        streak = self._streak.total()
        if record and self.max_consecutive and streak >= self.max_consecutive:
            reasons, self._streak = self._streak, Counter()
            raise QuarantineStreak(entry.uri, streak, reasons)

    def accepted(self) -> None:
        """A record was read into a case (or a new input starts): a run of rejected records
        ends here."""
        if self._streak:
            self._streak.clear()

    def _write(self, line: bytes) -> None:
        if self._fh is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("ab")
        self._fh.write(line)

    @property
    def total(self) -> int:
        """Entries added (every reason)."""
        return self._total

    def close(self) -> None:
        """Write each input's summary line (entries over ``max_entries``), close the file."""
        for uri, reasons in self._unwritten.items():
            by_reason = ", ".join(f"{r} {n:,}" for r, n in reasons.most_common())
            summary = {
                "summary": True,
                "uri": uri,
                "written": self._written[uri],
                "not_written": reasons.total(),
                "not_written_by_reason": dict(reasons),
                "detail": f"{reasons.total():,} more quarantined records of this input are "
                f"counted but not written (ingest.quarantine_max_entries = {self.max_entries:,})"
                f": {by_reason}",
            }
            self._write(orjson.dumps(summary) + b"\n")
        self._unwritten.clear()
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> Quarantine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_quarantine(path: Path, summaries: bool = False) -> list[dict[str, Any]]:
    """All entries of a quarantine file (for tests, reports and replays of fixed records);
    with ``summaries``, the summary lines of entries not written too."""
    if not path.exists():
        return []
    with path.open("rb") as fh:
        entries = [orjson.loads(line) for line in fh if line.strip()]
    return entries if summaries else [e for e in entries if not e.get("summary")]


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
