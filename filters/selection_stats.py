"""The funnel stage's numbers (datatrove-style step stats): kept, dropped, dropped per reason.

Ids, funnel names and counts only, never record text: safe for logs, manifests and reports.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.registry import build_funnels


def _count(frame: pl.DataFrame, expr: pl.Expr) -> int:
    return int(frame.select(expr.sum()).item() or 0) if frame.height else 0


def stats_columns(config: FunnelsConfig) -> list[str]:
    """The decision columns ``selection_stats`` reads (a caller may keep only these)."""
    return ["status", "candidate", *(f"in_{f.name}" for f in build_funnels(config))]


def selection_stats(decisions: pl.DataFrame, config: FunnelsConfig) -> dict[str, Any]:
    """Counts from ``filters.selection.choose`` decisions:

    cases, candidates, selected; members (per funnel, before gates and quotas); selected_per_funnel;
    overlaps (pairs of select funnels, among candidates: "a&b" -> n); dropped (per status reason:
    no_funnel, gate:<reason>, quota:<reason>); quota_cuts_per_funnel (cut candidates carrying f).
    """
    funnels = build_funnels(config)
    selects = [f.name for f in funnels if f.role == "select"]
    names = [f.name for f in funnels]
    decisions = decisions.select(stats_columns(config))
    candidates = decisions.filter(pl.col("candidate"))
    selected = decisions.filter(pl.col("status") == "selected")
    cut = candidates.filter(pl.col("status") != "selected")
    dropped = (
        decisions.filter(pl.col("status") != "selected").group_by("status").len().sort("status")
    )
    return {
        "cases": decisions.height,
        "candidates": candidates.height,
        "selected": selected.height,
        "members": {n: _count(decisions, pl.col(f"in_{n}")) for n in names},
        "selected_per_funnel": {n: _count(selected, pl.col(f"in_{n}")) for n in names},
        "overlaps": {
            f"{a}&{b}": _count(candidates, pl.col(f"in_{a}") & pl.col(f"in_{b}"))
            for a, b in combinations(selects, 2)
        },
        "dropped": dict(zip(dropped["status"].to_list(), dropped["len"].to_list(), strict=True)),
        "quota_cuts_per_funnel": {n: _count(cut, pl.col(f"in_{n}")) for n in selects},
    }
