"""Findings per distinct text kept for the life of a worker process, across its tasks.

A worker redacts one shard after another, and shards repeat many of their strings (tool
names, statuses, enum-like values, template text): about one in eight of a shard's analyzed
strings was already analyzed in one of the three shards before it. Findings are a pure function
of (text, the analyzer's configuration, threshold), so the second analysis is work for nothing.

Why this does not make a task's output depend on which tasks ran before in its process: an
entry is only ever the findings the same analyzer configuration would compute for the same text
(the memo is keyed by a fingerprint of everything an analyzer is built from, and by the
threshold), so a hit returns exactly what a miss would. Bounded in memory, not only in text: two
generations of at most ``GENERATION_BYTES`` each, an entry weighing its text plus what Python
spends to hold it (the dict slot, the string and list objects, each finding); when the current
one is full it becomes the old one and the older is dropped (a reader holding a dropped
generation still reads it safely). Most texts are short (a status, a tool name: ~30
characters), so a bound in characters alone let the per-entry overhead be ~5x the text: two
4M-character generations held ~60 MB per worker, most of a redact worker's growth over its
tasks. Lookups and inserts are single dict operations, safe for the threads of one process.
"""

from __future__ import annotations

from typing import Any

#: Estimated bytes per generation (two are kept, per analyzer: the scrubber's and the
#: verifier's: ~64 MB per worker in all). 8 MB kept 12.3% hits instead of 17.2% over 8 tasks
#: of the 200k benchmark, and a worker redacts ~200 shards at a million sessions, where the
#: lost hits cost more than the memory saved (docs/benchmarks.md, session 6).
GENERATION_BYTES = 16_000_000
#: What holding one entry costs besides its text (dict slot ~100 B amortised, str header 49 B,
#: list 56 B), and each finding in it (a 4-field object ~72 B plus its pointer).
ENTRY_BYTES = 210
FINDING_BYTES = 80
#: Texts longer than this are not kept: long free text rarely repeats across shards.
MAX_TEXT_CHARS = 4_000


class FindingsMemo:
    """Findings per text for one analyzer fingerprint and threshold (two generations)."""

    __slots__ = ("_bytes", "_current", "_old", "hits", "misses")

    def __init__(self) -> None:
        self._current: dict[str, Any] = {}
        self._old: dict[str, Any] = {}
        self._bytes = 0  # estimated size of the current generation
        self.hits = 0
        self.misses = 0

    def get(self, text: str) -> Any:
        found = self._current.get(text)
        if found is None:
            found = self._old.get(text)
            if found is None:
                self.misses += 1
                return None
            self.put(text, found)  # still in use: keep it in the current generation
        self.hits += 1
        return found

    def put(self, text: str, findings: Any) -> None:
        if len(text) > MAX_TEXT_CHARS:
            return
        size = entry_bytes(text, findings)
        if self._bytes + size > GENERATION_BYTES:
            self._old, self._current, self._bytes = self._current, {}, 0
        self._current[text] = findings
        self._bytes += size

    @property
    def estimated_bytes(self) -> int:
        """Estimated memory of both generations (the old one re-estimated)."""
        old = sum(entry_bytes(t, f) for t, f in list(self._old.items()))
        return self._bytes + old

    def __len__(self) -> int:
        return len(self._current) + len(self._old)


def entry_bytes(text: str, findings: Any) -> int:
    """Estimated memory of one entry: its text, its findings and Python's overhead."""
    return len(text) + ENTRY_BYTES + FINDING_BYTES * len(findings or ())


#: (analyzer fingerprint, threshold) -> memo, for this process.
_MEMOS: dict[tuple[str, float], FindingsMemo] = {}


def process_memo(fingerprint: str, threshold: float) -> FindingsMemo:
    """This process's memo for an analyzer configuration and threshold."""
    key = (fingerprint, threshold)
    memo = _MEMOS.get(key)
    if memo is None:
        memo = _MEMOS.setdefault(key, FindingsMemo())
    return memo


def stats() -> dict[str, int]:
    """Hits, misses and entries of this process's memos (summed), for tests and benchmarks."""
    memos = list(_MEMOS.values())
    return {
        "hits": sum(m.hits for m in memos),
        "misses": sum(m.misses for m in memos),
        "entries": sum(len(m) for m in memos),
    }


def clear() -> None:
    """Forget every memo of this process (tests: a run as a fresh worker would make it)."""
    _MEMOS.clear()
