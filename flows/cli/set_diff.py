"""`golden sets diff A B`: cases added, removed and changed (with what changed), the config
diff between the two versions, and drift (largest shifts first), as text, JSON or Markdown."""

from __future__ import annotations

from typing import Any

import polars as pl

from golden_distill.filters.drift import case_changes, drift
from golden_distill.filters.preview import config_changes


def _frame(golden: Any) -> pl.DataFrame:
    frame = pl.from_arrow(golden.read_table())
    assert isinstance(frame, pl.DataFrame)
    return frame


def diff_report(a: Any, b: Any, *, top: int = 20) -> dict[str, Any]:
    """Everything `golden sets diff` shows, for two opened versions (GoldenSet)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.diff import diff_sets

    coverage = diff_sets(a, b).as_dict()
    fa, fb = _frame(a), _frame(b)
    ids_a, ids_b = set(fa["case_id"].to_list()), set(fb["case_id"].to_list())
    config = config_changes(a.manifest.get("config") or {}, b.manifest.get("config") or {})
    return {
        "a": f"{a.name}@{a.version}",
        "b": f"{b.name}@{b.version}",
        "totals": {"a": fa.height, "b": fb.height},
        "added": sorted(ids_b - ids_a),
        "removed": sorted(ids_a - ids_b),
        "changed": case_changes(fa, fb),
        "config_changes": [{"key": c["key"], "a": c["config"], "b": c["against"]} for c in config],
        "drift": drift(fa, fb, top=top),
        "coverage": {
            k: coverage[k] for k in ("tools_added", "tools_lost", "systems_added", "systems_lost")
        },
        "funnels": coverage["funnels"],
    }


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)


def render_text(report: dict[str, Any], limit: int) -> str:
    t = report["totals"]
    lines = [f"{report['a']} -> {report['b']}: {t['a']} -> {t['b']} cases"]
    for label in ("added", "removed"):
        ids = report[label]
        lines.append(f"{label}: {len(ids)}")
        lines += [f"  {c}" for c in ids[:limit]]
    lines.append(f"changed: {len(report['changed'])} (content only; a moved recording is not)")
    for case in report["changed"][:limit]:
        lines.append(f"  {case['case_id']} ({', '.join(case['changed'])})")
        for column, values in case["detail"].items():
            lines.append(f"    {column}: {_value(values['before'])}  ->  {_value(values['after'])}")
    for funnel, counts in report["funnels"].items():
        lines.append(f"funnel {funnel:<22} {counts['a']} -> {counts['b']}")
    cov = report["coverage"]
    for label, key in (("tools newly covered", "tools_added"), ("tools lost", "tools_lost"),
                       ("systems newly covered", "systems_added"),
                       ("systems lost", "systems_lost")):  # fmt: skip
        lines.append(f"{label}: {', '.join(cov[key]) or '-'}")
    changes = report["config_changes"]
    lines.append("config changes:" if changes else "config changes: none")
    lines += [f"  {c['key']}: {c['a']!r} -> {c['b']!r}" for c in changes]
    lines.append("drift (share of cases, largest shifts first):")
    for d in report["drift"] or []:
        lines.append(
            f"  {d['dimension']:<13} {d['value']:<32} {d['before']:7.1%} -> {d['after']:7.1%} "
            f"({d['shift']:+.1%})"
        )
    if not report["drift"]:
        lines.append("  none")
    return "\n".join(lines)


def render_markdown(report: dict[str, Any], limit: int) -> str:
    t = report["totals"]
    out = [
        f"# {report['a']} -> {report['b']}",
        "",
        f"{t['a']} -> {t['b']} cases; {len(report['added'])} added, "
        f"{len(report['removed'])} removed, {len(report['changed'])} changed.",
        "",
        "## Changed cases",
        "",
        "| case | field | before | after |",
        "|---|---|---|---|",
    ]
    for case in report["changed"][:limit]:
        for column, values in case["detail"].items():
            out.append(
                f"| {case['case_id']} | {column} | {_value(values['before'])} | "
                f"{_value(values['after'])} |"
            )
    out += ["", "## Config changes", "", "| key | before | after |", "|---|---|---|"]
    out += [f"| {c['key']} | {c['a']!r} | {c['b']!r} |" for c in report["config_changes"]]
    out += [
        "",
        "## Drift",
        "",
        "| dimension | value | before | after | shift |",
        "|---|---|---|---|---|",
    ]
    out += [
        f"| {d['dimension']} | {d['value']} | {d['before']:.1%} | {d['after']:.1%} | "
        f"{d['shift']:+.1%} |"
        for d in report["drift"]
    ]
    return "\n".join(out)
