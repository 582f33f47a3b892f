"""What `golden preview` reports: counts per funnel, overlaps, breakdowns, dedup and quota cuts,
borderline merges, examples, and the difference between two configs. Pure functions over the
decisions of ``filters.selection.choose`` (the flow's own selection), no I/O.

Privacy: the report holds case ids, tenant ids, system and tool names, counts and funnel reasons.
Reasons are built by the funnels from counts, tool names, systems and numbers, never from record
text, so nothing a user typed can reach a preview.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.dedup.borderline import MIXED_SCHEMA, borderline_members
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.quotas import shares
from golden_distill.filters.registry import build_funnels
from golden_distill.filters.runner import SELECTED
from golden_distill.filters.selection_stats import selection_stats

TOP = 15


def _names(config: FunnelsConfig) -> tuple[list[str], list[str]]:
    funnels = build_funnels(config)
    return [f.name for f in funnels if f.role == "select"], [f.name for f in funnels]


def _combos(candidates: pl.DataFrame, selects: list[str]) -> dict[str, int]:
    """Exact funnel combinations among candidates: "high_value_mutating+recovery" -> n."""
    if not candidates.height:
        return {}
    combos = candidates.select(
        combo=pl.col("funnels").list.set_intersection(pl.lit(selects)).list.sort().list.join("+")
    )["combo"]
    counts = Counter(combos.to_list())
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _breakdown(decisions: pl.DataFrame, by: str, *, listed: bool) -> list[dict[str, Any]]:
    """Per value of ``by`` (a column, or a list column when ``listed``): cases, candidates,
    selected; the TOP values by selected count."""
    frame = decisions.select(by, "candidate", sel=pl.col("status") == SELECTED)
    if listed:
        frame = frame.explode(by)
    grouped = (
        frame.group_by(by)
        .agg(cases=pl.len(), candidates=pl.col("candidate").sum(), selected=pl.col("sel").sum())
        .sort(["selected", "candidates", by], descending=[True, True, False], nulls_last=True)
        .head(TOP)
    )
    return [
        {"name": row[by], "cases": row["cases"], "candidates": row["candidates"],
         "selected": row["selected"]}
        for row in grouped.iter_rows(named=True)
    ]  # fmt: skip


def _reason(row: dict[str, Any], funnel: str) -> str | None:
    return json.loads(row["funnel_reasons"] or "{}").get(funnel)


def _examples(decisions: pl.DataFrame, selects: list[str], k: int) -> dict[str, list[dict]]:
    chosen = decisions.filter(pl.col("status") == SELECTED).sort("priority")
    out: dict[str, list[dict]] = {}
    for name in selects:
        rows = chosen.filter(pl.col(f"in_{name}")).head(k).iter_rows(named=True)
        out[name] = [{"case_id": r["case_id"], "reason": _reason(r, name)} for r in rows]
    return out


def _dedup_section(
    decisions: pl.DataFrame,
    clusters: pl.DataFrame | None,
    dedup: DedupConfig | None,
    mixed: pl.DataFrame | None,
) -> dict[str, Any]:
    """Clusters among the candidates, cases dedup removed, borderline merges and mixed pairs
    (same content, different work: never merged) (ids only)."""
    removed = decisions.filter(pl.col("status").str.starts_with("dedup:")).height
    if clusters is None or dedup is None:
        return {"enabled": False, "removed": removed, "clusters": 0, "borderline": []}
    mixed = mixed if mixed is not None else pl.DataFrame(schema=MIXED_SCHEMA)
    return {
        "enabled": True,
        "clusters": int((clusters.get_column("rank") == 0).sum()),
        "removed": removed,
        "borderline": borderline_members(clusters, dedup).head(TOP).to_dicts(),
        "mixed_pairs": mixed.head(TOP).to_dicts(),
        "mixed_pairs_total": mixed.height,
    }


def preview_report(
    decisions: pl.DataFrame,
    config: FunnelsConfig,
    *,
    examples: int = 3,
    clusters: pl.DataFrame | None = None,
    dedup: DedupConfig | None = None,
    mixed: pl.DataFrame | None = None,
) -> dict[str, Any]:
    """The preview of one config over decided cases (``filters.selection.choose`` over
    ``score_cases(..., details=True)``, which has the tools and systems lists)."""
    selects, _ = _names(config)
    stats = selection_stats(decisions, config)
    candidates = decisions.filter(pl.col("candidate"))
    kept = decisions.filter(pl.col("status") == SELECTED)
    return {
        "cases": stats["cases"],
        "candidates": stats["candidates"],
        "selected": stats["selected"],
        "funnels": {
            name: {
                "members": stats["members"][name],
                "selected": stats["selected_per_funnel"][name],
                "cut_by_quotas": stats["quota_cuts_per_funnel"].get(name, 0),
            }
            for name in stats["members"]
        },
        "overlaps": stats["overlaps"],
        "combinations": _combos(candidates, selects),
        "dropped": stats["dropped"],
        "quota_cuts": {k: v for k, v in stats["dropped"].items() if k.startswith("quota:")},
        "by_tenant": _breakdown(decisions, "tenant_id", listed=False),
        "by_system": _breakdown(decisions, "systems", listed=True),
        "by_tool": _breakdown(decisions, "tools", listed=True),
        "examples": _examples(decisions, selects, examples),
        "dedup": _dedup_section(decisions, clusters, dedup, mixed),
        "shares": shares(kept, config.quotas, selects),
    }


def config_changes(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[dict]:
    """Dotted keys whose values differ between two config dumps: {key, config, against}."""
    changes: list[dict] = []
    for key in sorted(set(a) | set(b)):
        path = f"{prefix}{key}"
        left, right = a.get(key), b.get(key)
        if isinstance(left, dict) and isinstance(right, dict):
            changes.extend(config_changes(left, right, f"{path}."))
        elif left != right:
            changes.append({"key": path, "config": left, "against": right})
    return changes


def _moves(joined: pl.DataFrame, mask: pl.Expr, k: int, selecting: str) -> dict[str, Any]:
    """Cases matching ``mask``: how many, their status under the other config, a few examples
    with their reasons under the ``selecting`` config (``config`` or ``against``)."""
    other = "against" if selecting == "config" else "config"
    moved = joined.filter(mask)
    why = Counter(moved[f"status_{other}"].to_list())
    examples = [
        {
            "case_id": r["case_id"],
            "status_config": r["status_config"],
            "status_against": r["status_against"],
            "reasons": json.loads(r[f"funnel_reasons_{selecting}"] or "{}"),
        }
        for r in moved.sort("case_id").head(k).iter_rows(named=True)
    ]
    return {
        "count": moved.height,
        f"status_under_{other}": dict(sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))),
        "examples": examples,
    }


def _cluster_changes(joined: pl.DataFrame) -> dict[str, Any]:
    """Among cases selected under both configs: how many now stand for a cluster of another
    size (merged with more or fewer runs), with a few examples."""
    both = joined.filter(
        (pl.col("status_config") == SELECTED) & (pl.col("status_against") == SELECTED)
    )
    moved = both.filter(
        pl.col("cluster_size_config").fill_null(1) != pl.col("cluster_size_against").fill_null(1)
    ).sort("case_id")
    return {
        "selected_in_both": both.height,
        "cluster_size_changed": moved.height,
        "examples": [
            {
                "case_id": r["case_id"],
                "cluster_size_config": r["cluster_size_config"],
                "cluster_size_against": r["cluster_size_against"],
            }
            for r in moved.head(TOP).iter_rows(named=True)
        ],
    }


def diff_report(
    config: pl.DataFrame,
    against: pl.DataFrame,
    config_cfg: Any,
    against_cfg: Any,
    *,
    examples: int = 5,
) -> dict[str, Any]:
    """Cases entering (selected under ``config`` only) and leaving (selected under ``against``
    only), with why: their status under the other config and their reasons under the one that
    selects them; funnel membership gained/lost; cluster changes; every config key that differs.
    ``config_cfg``/``against_cfg``: whole pipeline configs (or funnel sections)."""
    config, against = (
        f if "cluster_size" in f.columns else f.with_columns(cluster_size=pl.lit(None, pl.Int32))
        for f in (config, against)
    )
    cols = ["case_id", "status", "funnels", "funnel_reasons", "cluster_size"]
    joined = (
        config.select(cols)
        .join(against.select(cols), on="case_id", how="full", suffix="_against", coalesce=True)
        .rename({c: f"{c}_config" for c in cols[1:]})
        .with_columns(pl.col("status_config", "status_against").fill_null("absent"))
    )
    sel_a = pl.col("status_config") == SELECTED
    sel_b = pl.col("status_against") == SELECTED
    funnels_a = getattr(config_cfg, "funnels", config_cfg)
    funnels_b = getattr(against_cfg, "funnels", against_cfg)
    prefix = "funnels." if funnels_a is config_cfg else ""
    membership = {}
    for name in sorted(set(_names(funnels_a)[1]) | set(_names(funnels_b)[1])):
        in_a = pl.col("funnels_config").list.contains(name).fill_null(False)
        in_b = pl.col("funnels_against").list.contains(name).fill_null(False)
        membership[name] = {
            "gained": int(joined.select((in_a & ~in_b).sum()).item()),
            "lost": int(joined.select((~in_a & in_b).sum()).item()),
        }
    selected = {
        "config": int(joined.select(sel_a.sum()).item()),
        "against": int(joined.select(sel_b.sum()).item()),
    }
    return {
        "selected": selected,
        "entering": _moves(joined, sel_a & ~sel_b, examples, "config"),
        "leaving": _moves(joined, sel_b & ~sel_a, examples, "against"),
        "membership_changes": membership,
        "cluster_changes": _cluster_changes(joined),
        "config_changes": config_changes(
            config_cfg.model_dump(mode="json"), against_cfg.model_dump(mode="json"), prefix
        ),
    }
