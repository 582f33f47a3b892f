"""Reading and appending a set's review log in the store (``filters/review.py`` says what it
holds). `golden review import` and the review page (`golden review serve`) append through
``record_decisions``, so a decision made either way is the same line and the next run applies
it the same way."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from golden_distill.filters.review import log_lines, log_path, parse_log


def read_log(fs: Any, set_name: str) -> list[dict[str, Any]]:
    """Every entry of ``set_name``'s review log (none when nobody reviewed it yet)."""
    try:
        return parse_log(fs.read_bytes(log_path(set_name)))
    except FileNotFoundError:
        return []


def record_decisions(fs: Any, set_name: str, entries: list[dict[str, Any]]) -> dict[str, int]:
    """Append ``entries`` (``check_row`` output) to the log with one timestamp, atomically
    (compare-and-swap, so two reviewers never lose each other's lines); decisions per kind."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    data = log_lines(entries, at)
    fs.update(log_path(set_name), lambda old: (old or b"") + data)
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry["decision"]] = counts.get(entry["decision"], 0) + 1
    return counts
