"""Reproducibility as a ratio: one case replayed N times, merged into one ``CaseCheck``.

Each distinct row (``Diff.signature``) is kept once with ``seen`` = the number of replays that
had it; the case records how many replays had no difference (``reproduced``) out of ``repeats``.
A case whose replays disagree is flaky. Rows seen in fewer than ``gate.repeat.min_diff_ratio``
of the replays are dropped from the gate's figures (kept in ``CaseCheck.below_ratio`` for the
report); the counts the gate adds up (aligned calls, final state...) come from the replay with
the most rows that count, so a flaky failure is never hidden by a clean repeat unless the gate
says so.
"""

from __future__ import annotations

from dataclasses import replace

from golden_distill.datasets.replay.checks.base import CaseCheck
from golden_distill.datasets.replay.diffs import Diff


def merge_repeats(checks: list[CaseCheck], min_diff_ratio: float = 0.0) -> CaseCheck:
    """One check from the N replays of one case."""
    n = len(checks)
    seen: dict[tuple[object, ...], list[Diff]] = {}
    for check in checks:
        for sig in dict.fromkeys(d.signature() for d in check.diffs):
            seen.setdefault(sig, []).append(next(d for d in check.diffs if d.signature() == sig))
    kept, below = [], []
    for rows in seen.values():
        row = replace(rows[0], seen=len(rows), repeats=n)
        (kept if len(rows) / n >= min_diff_ratio else below).append(row)
    counted = {d.signature() for d in kept}
    worst = max(checks, key=lambda c: sum(1 for d in c.diffs if d.signature() in counted))
    merged = replace(worst, diffs=kept)
    if below and not kept:  # every difference is below the ratio: the case counts as clean
        merged = replace(min(checks, key=lambda c: len(c.diffs)), diffs=[])
        merged.final_state_ok = True
        merged.stub_escapes = 0
    merged.below_ratio = below
    merged.reproduced = sum(1 for c in checks if not c.diffs)
    merged.repeats = n
    return merged
