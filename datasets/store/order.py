"""The order of calls in a run: a checksum and a diff, so a replay notices changed call order.

A replay harness records the calls the new agent makes, as (tool, arguments) pairs, and compares
them with the recorded run: the checksums differ when a call was inserted, removed or moved, and
``compare_order`` says which. Calls are compared by tool name and canonical-arguments hash, so
key order and volatile keys (request ids, timestamps) do not count as differences.
"""

from __future__ import annotations

import difflib
import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from golden_distill.datasets.canonical_json import canonical_args_sha256


def order_checksum(calls: Iterable[tuple[str, str]]) -> str:
    """sha256 over the ordered ``(tool, canonical_args_sha256)`` pairs of a run."""
    digest = hashlib.sha256()
    for name, args_sha in calls:
        digest.update(f"{name}\x1f{args_sha}\n".encode())
    return digest.hexdigest()


def observed_order(
    calls: Iterable[tuple[str, Any]], volatile_keys: Iterable[str] | None = None
) -> list[tuple[str, str]]:
    """A harness's observed ``(tool, arguments)`` calls as ``(tool, canonical hash)`` pairs."""
    vk = list(volatile_keys) if volatile_keys is not None else None
    return [(name, canonical_args_sha256(args, vk)) for name, args in calls]


@dataclass(slots=True)
class OrderDiff:
    """How an observed call sequence differs from the recorded one (positions are 0-based)."""

    inserted: list[int] = field(default_factory=list)  # positions in the observed sequence
    removed: list[int] = field(default_factory=list)  # positions in the recorded sequence
    reordered: bool = False  # same calls, different order

    @property
    def identical(self) -> bool:
        return not (self.inserted or self.removed or self.reordered)


def compare_order(
    recorded: Sequence[tuple[str, str]], observed: Sequence[tuple[str, str]]
) -> OrderDiff:
    diff = OrderDiff()
    if list(recorded) == list(observed):
        return diff
    if Counter(recorded) == Counter(observed):
        diff.reordered = True
        return diff
    matcher = difflib.SequenceMatcher(a=list(recorded), b=list(observed), autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            diff.removed.extend(range(a0, a1))
        if tag in ("insert", "replace"):
            diff.inserted.extend(range(b0, b1))
    return diff
