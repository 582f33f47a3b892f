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


def add_stats(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The ``selection_stats`` of two disjoint sets of rows, as one: every figure is a count,
    so the select step counts the rows a choice cannot change once and adds each choice's."""

    def added(x: dict[str, int], y: dict[str, int]) -> dict[str, int]:
        return {k: x.get(k, 0) + y.get(k, 0) for k in (*x, *(k for k in y if k not in x))}

    out: dict[str, Any] = {}
    for key, value in a.items():
        out[key] = added(value, b[key]) if isinstance(value, dict) else value + b[key]
    out["dropped"] = dict(sorted(out["dropped"].items()))
    return out
