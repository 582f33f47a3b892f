"""Findings per distinct text kept for the life of a worker process, across its tasks.

A worker redacts one shard after another, and shards repeat many of their strings (tool
names, statuses, enum-like values, template text): about one in eight of a shard's analyzed
strings was already analyzed in one of the three shards before it. Findings are a pure function
of (text, the analyzer's configuration, threshold), so the second analysis is work for nothing.

Why this does not make a task's output depend on which tasks ran before in its process: an
entry is only ever the findings the same analyzer configuration would compute for the same text
(the memo is keyed by a fingerprint of everything an analyzer is built from, and by the
threshold), so a hit returns exactly what a miss would. Bounded: two generations of at most
``GENERATION_CHARS`` characters of text each; when the current one is full it becomes the old
one and the older is dropped (a reader holding a dropped generation still reads it safely).
Lookups and inserts are single dict operations, safe for the threads of one process.
"""

from __future__ import annotations

from typing import Any

#: Characters of text per generation (two generations are kept: ~2x this in text, plus the
#: findings lists; tens of MB per worker at most, which recycles after a few dozen tasks).
GENERATION_CHARS = 4_000_000
#: Texts longer than this are not kept: long free text rarely repeats across shards.
MAX_TEXT_CHARS = 4_000


class FindingsMemo:
    """Findings per text for one analyzer fingerprint and threshold (two generations)."""

    __slots__ = ("_chars", "_current", "_old", "hits", "misses")

    def __init__(self) -> None:
        self._current: dict[str, Any] = {}
        self._old: dict[str, Any] = {}
        self._chars = 0
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
        if self._chars + len(text) > GENERATION_CHARS:
            self._old, self._current, self._chars = self._current, {}, 0
        self._current[text] = findings
        self._chars += len(text)

    def __len__(self) -> int:
        return len(self._current) + len(self._old)


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
