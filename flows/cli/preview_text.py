"""Plain-text rendering of `golden preview` reports (ids, names, counts and reasons only)."""

from __future__ import annotations

from typing import Any

from golden_distill.datasets.quarantine import quarantine_hint


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _table(title: str, rows: list[dict[str, Any]], columns: list[str]) -> list[str]:
    if not rows:
        return [f"{title}: none"]
    widths = [max(len(c), *(len(_n(r.get(c))) for r in rows)) for c in columns]

    def line(cells: list[str]) -> str:
        padded = [
            v.ljust(w) if i == 0 else v.rjust(w)
            for i, (v, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  " + "  ".join(padded)

    out = [title, line(columns)]
    out += [line([_n(row.get(c)) for c in columns]) for row in rows]
    return out


def _counts(counts: dict[str, int]) -> str:
    return "; ".join(f"{k} {_n(v)}" for k, v in counts.items()) or "none"


def _dedup_lines(dedup: dict[str, Any]) -> list[str]:
    if not dedup.get("enabled"):
        return ["dedup: off"]
    lines = [
        f"dedup: {_n(dedup['clusters'])} clusters among the candidates; "
        f"{_n(dedup['removed'])} cases removed as duplicates of a representative"
    ]
    border = dedup.get("borderline") or []
    lines.append(
        f"borderline merges (within dedup.borderline_band of the threshold): {len(border)}"
        + ("" if border else " (none)")
    )
    lines += [
        f"  {b['case_id']} ~ {b['representative']}  distance {b['distance']:.3f}" for b in border
    ]
    mixed = dedup.get("mixed_pairs") or []
    total = dedup.get("mixed_pairs_total", len(mixed))
    lines.append(
        f"mixed pairs (same run, different task/outcome/tenant; never merged): {_n(total)}"
        + ("" if total else " (none)")
    )
    lines += [f"  {m['case_id']} vs {m['other']}  differs in {m['differs']}" for m in mixed]
    return lines


#: What `golden run` does that preview does not: it is said with every preview.
NOT_PREDICTED = (
    "not predicted here: redaction's refusals. `golden run` replaces a refused case by the "
    "next member of its cluster, or reports the cluster lost (its console, report and "
    "manifest count both), so it can publish fewer cases than selected here "
    "(--check-redaction predicts them)"
)


def _share_lines(shares: dict[str, Any]) -> list[str]:
    lines = []
    for kind in ("funnel", "tenant"):
        capped = {k: v for k, v in (shares.get(kind) or {}).items() if v.get("cap") is not None}
        for name, s in capped.items():
            lines.append(
                f"share of {kind} {name}: {s['count']:,} = {s['share']:.1%} (cap {s['cap']})"
            )
    return lines


def render_preview(report: dict[str, Any]) -> str:
    p = report["preview"]
    t = report["timing"]
    lines = [
        f"golden preview of {report['config']}: {_n(p['cases'])} cases "
        f"(read {t['read_seconds']:.1f} s, funnels {t['funnels_seconds']:.1f} s, "
        f"wall {t['wall_seconds']:.1f} s)",
    ]
    if "ingest" in report and report["ingest"].get("quarantined"):
        quarantined = report["ingest"]["quarantined"]
        lines.append(f"quarantined while reading: {_counts(quarantined)}")
        lines += [f"  hint ({r}): {h}" for r in quarantined if (h := quarantine_hint(r))]
    lines.append(
        f"selected {_n(p['selected'])} of {_n(p['candidates'])} candidates ({_n(p['cases'])} cases)"
    )
    refusals = p.get("redaction_refusals")
    if refusals is None:
        lines.append(NOT_PREDICTED)
    else:
        lines.append(
            f"redaction check: {_n(refusals['refused'])} would be refused; "
            f"{_n(refusals['replaced'])} replaced, {_n(refusals['clusters_lost'])} cluster(s) "
            f"lost; {_n(refusals['published'])} of {_n(refusals['selected'])} would be published"
        )
    lines.append("")
    funnel_rows = [{"funnel": k, **v} for k, v in p["funnels"].items()]
    lines += _table("per funnel", funnel_rows, ["funnel", "members", "selected", "cut_by_quotas"])
    lines.append("")
    lines.append(f"overlaps among candidates: {_counts(p['overlaps'])}")
    lines.append(f"funnel combinations: {_counts(p['combinations'])}")
    lines.append(f"not selected, by reason: {_counts(p['dropped'])}")
    lines.append(f"quota cuts: {_counts(p['quota_cuts'])}")
    lines += _dedup_lines(p.get("dedup") or {})
    lines += _share_lines(p.get("shares") or {})
    for key, title in (("by_tenant", "tenant"), ("by_system", "system"), ("by_tool", "tool")):
        lines.append("")
        rows = [{title: r["name"], **r} for r in p[key]]
        lines += _table(f"by {title} (top {len(rows)})", rows,
                        [title, "cases", "candidates", "selected"])  # fmt: skip
    lines.append("")
    lines.append("examples")
    for funnel, items in p["examples"].items():
        lines.append(f"  {funnel}")
        lines += [f"    {e['case_id']}  {e['reason']}" for e in items] or ["    (none)"]
    return "\n".join(lines)


def render_diff(report: dict[str, Any]) -> str:
    d = report["diff"]
    lines = [
        "",
        f"{report['config']} selects {_n(d['selected']['config'])}; "
        f"{report['against']} selects {_n(d['selected']['against'])}",
    ]
    for key, other in (("entering", "against"), ("leaving", "config")):
        move = d[key]
        lines.append(
            f"{key}: {_n(move['count'])} (status under {other}: "
            f"{_counts(move[f'status_under_{other}'])})"
        )
        for e in move["examples"]:
            reasons = "; ".join(f"{k}: {v}" for k, v in e["reasons"].items())
            lines.append(
                f"  {e['case_id']}  against={e['status_against']} config={e['status_config']}"
                f"  {reasons}"
            )
    clusters = d.get("cluster_changes") or {}
    if clusters:
        lines.append(
            f"cluster changes: {_n(clusters['cluster_size_changed'])} of "
            f"{_n(clusters['selected_in_both'])} cases selected by both stand for a cluster of "
            "another size"
        )
        lines += [
            f"  {e['case_id']}  cluster size {e['cluster_size_config']} "
            f"(against: {e['cluster_size_against']})"
            for e in clusters["examples"]
        ]
    rows = [{"funnel": k, **v} for k, v in d["membership_changes"].items()]
    lines += _table("membership changes", rows, ["funnel", "gained", "lost"])
    changes = d["config_changes"]
    lines.append("config changes:" if changes else "config changes: none")
    lines += [f"  {c['key']}: {c['config']!r} (against: {c['against']!r})" for c in changes]
    return "\n".join(lines)
