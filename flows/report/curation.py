"""The report's curation sections: published cases per split and trust (what `golden sets
promote --min-trust` checks, by the same rule), and the coverage gap of the run."""

from __future__ import annotations

from typing import Any

from golden_distill.filters.trust import below_in_regression
from golden_distill.flows.report.html import table as _table


def splits_section(stats: dict[str, Any]) -> str:
    """Published cases per split and trust, and what `golden sets promote --min-trust` would
    refuse: the counts come from the same rule (``filters/trust.py``), so they agree."""
    by_split = stats.get("trust_by_split") or {}
    rows = [
        (split, trust, int(n))
        for split, counts in sorted(by_split.items())
        for trust, n in sorted(counts.items())
    ]
    if not rows:
        return ""
    notes = []
    for minimum in ("oracle", "human"):
        weak = below_in_regression(by_split, minimum)
        verdict = "refuses this version" if weak else "accepts this version"
        notes.append(
            f"<p>{weak:,} regression case(s) trusted less than {minimum}: "
            f"<code>golden sets promote --min-trust {minimum}</code> {verdict}.</p>"
        )
    held = stats.get("held_by_confirmation_gate")
    if held:
        notes.append(
            f"<p>{int(held):,} case(s) held in dev by the confirmation gate "
            "(curation.review.require_confirmation): each moves to regression on the next "
            "version once confirmed.</p>"
        )
    return _table(("split", "trust", "cases"), rows) + "".join(notes)


def coverage_gap_section(stats: dict[str, Any]) -> str:
    """This run's candidates whose tool path or task has no case in this version (every run,
    windowed or not: ``filters/coverage.py``)."""
    gap = stats.get("coverage_gap") or {}
    if not gap:
        return ""
    parts = [
        f"<p>{int(gap.get('candidates', 0)):,} candidates read by this run. Without a case "
        "in this version:</p>"
    ]
    for key, label in (("tool_paths", "tool paths"), ("tasks", "tasks (intent, task id)")):
        dim = gap.get(key) or {}
        parts.append(
            f"<p>{label}: {int(dim.get('uncovered_cases', 0)):,} case(s) on "
            f"{int(dim.get('uncovered', 0)):,} {label.split(' (')[0]}</p>"
        )
        rows = [(t["shown"], int(t["cases"])) for t in dim.get("top") or []]
        if rows:
            parts.append(_table((label.split(" (")[0][:-1], "cases"), rows))
    return "".join(parts)
