"""One self-contained HTML page for a published version: what was read, selected, cut and why.

Everything shown is escaped; the page has no script, no external style sheet, font or image, so
it renders offline and cannot leak anything when opened.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from golden_distill.datasets.quarantine import quarantine_hint
from golden_distill.flows.report.curation import coverage_gap_section, splits_section
from golden_distill.flows.report.html import table as _table
from golden_distill.flows.report.svg import bar_chart
from golden_distill.flows.tasks.run_stats import CASE_TABLE_ROWS
from golden_distill.redaction.inventory import unclassified_findings, verifier_paths

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:980px;
color:#222;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0}
td,th{padding:.2rem .7rem;border-bottom:1px solid #eee;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.meta td{border:none;padding:.1rem .7rem .1rem 0}.muted{color:#777}
svg text{font-family:system-ui,sans-serif;fill:#222}
.flag{color:#b00020;font-weight:bold}
"""


def _items(mapping: dict[str, Any] | None, limit: int | None = None) -> list[tuple[str, float]]:
    items = sorted(((str(k), float(v)) for k, v in (mapping or {}).items()), key=lambda kv: -kv[1])
    return items[:limit] if limit else items


def _bin_order(label: str) -> tuple[int, str]:
    """Numeric bins in numeric order (`size 2` before `size 10`), anything else after."""
    digits = "".join(ch for ch in label if ch.isdigit())
    return (int(digits), label) if digits else (1 << 62, label)


def _section(title: str, *parts: str) -> str:
    content = "".join(p for p in parts if p)
    if not content:
        content = '<p class="muted">nothing to show</p>'
    return f"<section><h2>{escape(title)}</h2>{content}</section>"


def _mapping_section(
    title: str, mapping: dict[str, Any] | None, color: int, label: str, *, by_key: bool = False
) -> str:
    """A bar chart and its table; largest first, or in key order (a histogram's bins)."""
    items = _items(mapping)
    if by_key:
        items.sort(key=lambda kv: _bin_order(kv[0]))
    return _section(
        title,
        bar_chart(title, items, color_index=color),
        _table((label, "count"), [(k, int(v)) for k, v in items]) if items else "",
    )


def _funnel_table(stats: dict[str, Any]) -> str:
    names = sorted(set(stats.get("funnels") or {}) | set(stats.get("published_per_funnel") or {}))
    rows = [
        (
            name,
            int((stats.get("funnels") or {}).get(name, 0)),
            int((stats.get("published_per_funnel") or {}).get(name, 0)),
        )
        for name in names
    ]
    return _table(("funnel", "candidates", "published"), rows) if rows else ""


def _flow_table(stats: dict[str, Any]) -> str:
    refusals = stats.get("redaction_refusals") or {}
    steps = [
        ("records read", stats.get("records_read")),
        ("quarantined while reading", sum((stats.get("quarantined") or {}).values())),
        ("cases read", stats.get("cases_read")),
        ("in the time window", stats.get("in_window")),
        ("candidates (in at least one funnel, past the gates)", stats.get("candidates")),
        ("removed by dedup (one representative per cluster)", stats.get("removed_by_dedup")),
        (
            "cut by quotas (over the representatives)",
            sum((stats.get("cut_by_quotas") or {}).values()),
        ),
        ("selected (one per cluster, within the quotas)", refusals.get("selected")),
        ("refused by redaction", refusals.get("refused")),
        ("  replaced by the next member of their cluster", refusals.get("replaced")),
        ("  clusters lost (no member could be published)", refusals.get("clusters_lost")),
        ("  admitted by the quotas after the refusals", refusals.get("admitted") or None),
        ("published", stats.get("published")),
    ]
    return _table(("step", "cases"), [(k, v) for k, v in steps if v is not None])


def _change(stats: dict[str, Any]) -> str:
    change = stats.get("change") or {}
    if not change:
        return ""
    if not change.get("parent"):
        return "<p>First version of this set: no parent to compare with.</p>"
    rows = [(k, int(change[k])) for k in ("added", "removed", "kept") if k in change]
    return f"<p>Parent version: <code>{escape(str(change['parent']))}</code></p>" + _table(
        ("cases", "count"), rows
    )


def _hints(quarantined: dict[str, Any] | None) -> str:
    """The setting that would keep each family of quarantined records, when one exists."""
    hints = [(r, h) for r in sorted(quarantined or {}) if (h := quarantine_hint(r))]
    return "".join(f"<p class='muted'>{escape(r)}: {escape(h)}</p>" for r, h in hints)


def _largest_clusters(stats: dict[str, Any]) -> str:
    """Each large cluster: its tool path and outcome, the member published (not the select
    step's first choice when redaction refused it), then every member (kept or dropped)."""
    parts = []
    for c in stats.get("largest_clusters") or []:
        shown = c.get("published") or ""
        published = (
            f"<p>published: <code>{escape(shown)}</code></p>"
            if shown
            else "<p>published: none (no member could be published)</p>"
            if "published" in c
            else ""
        )
        parts.append(
            f"<h3>{escape(c['cluster_id'])}: {int(c['size'])} runs, "
            f"{escape(c.get('outcome') or 'ok')}</h3>"
            f"<p class='muted'>tool path: <code>{escape(c.get('trajectory') or '')}</code></p>"
            + published
        )
        rows = [
            (m["case_id"], m["role"], m["merged_by"], float(m["distance"]), m.get("outcome") or "")
            for m in c.get("members") or []
        ]
        parts.append(_table(("case", "role", "merged by", "distance", "outcome"), rows))
    return "".join(parts)


def _borderline(stats: dict[str, Any]) -> str:
    rows = [
        (b["cluster_id"], b["case_id"], b["representative"], float(b["distance"]))
        for b in stats.get("borderline") or []
    ]
    if not rows:
        return ""
    note = (
        "<p class='muted'>Members merged at the edge of dedup.distance_threshold (within "
        "dedup.borderline_band): a tighter threshold would keep them apart.</p>"
    )
    return note + _table(("cluster", "case", "representative", "distance"), rows)


def _mixed(stats: dict[str, Any]) -> str:
    rows = [(m["case_id"], m["other"], m["differs"]) for m in stats.get("mixed_pairs") or []]
    if not rows:
        return ""
    total = int(stats.get("mixed_pairs_total", len(rows)))
    note = (
        f"<p class='muted'>{total:,} runs have the same content as another run but a different "
        "task, outcome or tenant: never merged, each kept in its own cluster"
        + (f" (the first {len(rows):,} listed)" if total > len(rows) else "")
        + ".</p>"
    )
    return note + _table(("case", "same content as", "differs in"), rows)


#: Rows of the case table shown in the page (the published cases hold every reason too).
CASE_ROWS = CASE_TABLE_ROWS


def _case_table(stats: dict[str, Any]) -> str:

    rows = []
    for case in (stats.get("case_table") or [])[:CASE_ROWS]:
        reasons = json.loads(case.get("funnel_reasons") or "{}")
        why = "; ".join(f"{f}: {r}" for f, r in reasons.items() if f != "redacted")
        rows.append(
            (
                case["case_id"],
                why,
                float(case.get("value_score") or 0.0),
                int(case.get("cluster_size") or 1),
                case.get("split") or "-",
                case.get("trust") or "-",
            )
        )
    if not rows:
        return ""
    shown = int(stats.get("published") or len(stats.get("case_table") or []))
    note = (
        f"<p class='muted'>First {CASE_ROWS:,} of {shown:,} by case id; "
        "`golden sets show REF --case ID` explains any case.</p>"
        if shown > CASE_ROWS
        else ""
    )
    headers = ("case", "why (funnels and reasons)", "value score", "cluster size", "split",
               "trust / review")  # fmt: skip
    return note + _table(headers, rows)


def _shares(stats: dict[str, Any]) -> str:
    rows = [
        (f"{kind} {name}", int(s["count"]), f"{s['share']:.1%}", s["cap"] if s["cap"] else "-")
        for kind in ("funnel", "tenant")
        for name, s in ((stats.get("shares") or {}).get(kind) or {}).items()
    ]
    return _table(("who", "published", "share", "cap"), rows) if rows else ""


def _drops(stats: dict[str, Any]) -> dict[str, int]:
    """Cases that were candidates and are not published, per reason."""
    drops = {f"quota: {k}": int(v) for k, v in (stats.get("cut_by_quotas") or {}).items()}
    if stats.get("removed_by_dedup"):
        drops["dedup: a member of a published case's cluster"] = int(stats["removed_by_dedup"])
    refusals = stats.get("redaction_refusals") or {}
    if refusals.get("replaced"):
        drops["redaction refused, replaced by the next cluster member"] = int(refusals["replaced"])
    if refusals.get("lost"):
        drops["redaction refused, cluster lost"] = int(refusals["lost"])
    extra = int(refusals.get("refused", 0)) - int(refusals.get("refused_selected", 0))
    if extra > 0:
        drops["redaction refused a replacement"] = extra
    for reason, count in (stats.get("review_rejected") or {}).items():
        drops[f"review rejected: {reason}"] = int(count)
    return drops


def _drift(stats: dict[str, Any]) -> str:
    if not stats.get("pinned"):
        return ""
    rows = [
        (d["dimension"], d["value"], f"{d['before']:.1%}", f"{d['after']:.1%}",
         f"{d['shift']:+.1%}")
        for d in stats.get("drift") or []
    ]  # fmt: skip
    head = f"<p>Against the pinned version <code>{escape(str(stats['pinned']))}</code>.</p>"
    table = _table(("dimension", "value", "before", "after", "shift"), rows) if rows else ""
    return head + table


def _stage_times(stats: dict[str, Any]) -> str:
    seconds = stats.get("stage_seconds") or {}
    items = [(k, round(float(v), 2)) for k, v in seconds.items()]
    return bar_chart("seconds per stage", items, color_index=5)


def _field_inventory(stats: dict[str, Any]) -> str:
    """Paths first seen in this run, paths where the verifier found something, and paths no
    rule owns where personal data was found (counts and entity types, never values)."""

    nested = stats.get("field_inventory") or {}
    if not nested:
        return ""
    new = stats.get("field_inventory_new") or []
    parts = [
        f"<p>{len(new):,} tool/path pair(s) first seen in this run"
        + (" (showing 40)" if len(new) > 40 else "")
        + ".</p>",
        _table(("tool and path first seen",), [(p,) for p in new[:40]]) if new else "",
    ]
    rows = [
        (tool, path, ", ".join(f"{e} {n}" for e, n in sorted(found.items())))
        for tool, path, found in verifier_paths(nested)
    ]
    if rows:
        parts.append(_table(("tool", "path", "verifier found (case quarantined)"), rows[:40]))
    rows = [
        (tool, path, ", ".join(f"{e} {n}" for e, n in sorted(found.items())))
        for tool, path, found in unclassified_findings(nested)
    ]
    if rows:
        parts.append(
            _table(("tool", "path", "found where no rule owns it (see golden fields)"), rows[:40])
        )
    return "".join(parts)


def _strength(stats: dict[str, Any]) -> str:
    """The version's kill share (flows/tasks/strength_step.py), flagged below the share."""
    figures = stats.get("strength")
    if not figures:
        return ""
    if "error" in figures:
        return _section("Strength", f"<p>not measured: {escape(str(figures['error']))}</p>")
    from golden_distill.datasets.replay.strength import StrengthReport, strength_section

    return strength_section(StrengthReport.from_dict(figures))


def render_report(stats: dict[str, Any]) -> str:
    """The report page for one run's ``stats`` (see flows/tasks/publish.py for the keys)."""
    version = stats.get("version")
    title = f"Golden set {stats.get('set_name', '?')}: " + (
        f"version {version}" if version else "run report of the version published with it"
    )
    meta_rows = [
        *(
            [("redaction", "UNSAFE: weakened configuration (redaction.unsafe_allow_weakened)")]
            if stats.get("redaction_weakened")
            else []
        ),
        ("set", stats.get("set_name")),
        ("version", version or "the folder this report is in (see manifest.json beside it)"),
        ("parent", (stats.get("change") or {}).get("parent") or "none"),
        ("created", stats.get("created_at")),
        ("config sha256", stats.get("config_sha256")),
        ("pipeline", stats.get("pipeline_version")),
        ("shards", f"{stats.get('shards', 0)} ({stats.get('shards_cached', 0)} from cache)"),
        (
            "redaction tasks",
            f"{stats.get('redact_tasks', 0)} ({stats.get('redact_tasks_cached', 0)} from cache)",
        ),
    ]
    meta = "".join(
        f"<tr><td class='muted'>{escape(k)}</td><td>{escape(str(v))}</td></tr>"
        for k, v in meta_rows
        if v is not None
    )
    coverage = stats.get("coverage") or {}
    coverage_parts = [
        _mapping_section(f"published cases per {dim}", counts, 2 + i, dim)
        for i, (dim, counts) in enumerate(sorted(coverage.items()))
    ]
    sizes = {f"size {k}": v for k, v in (stats.get("cluster_sizes") or {}).items()}
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<table class='meta'>{meta}</table>",
        _section("From recordings to golden cases", _flow_table(stats)),
        _mapping_section(
            "Quarantined while reading, per reason", stats.get("quarantined"), 1, "reason"
        )
        + _hints(stats.get("quarantined")),
        _section(
            "Funnels",
            bar_chart("candidates per funnel", _items(stats.get("funnels"))),
            _funnel_table(stats),
        ),
        _mapping_section(
            "Funnel overlaps (cases in several funnels)", stats.get("funnel_overlaps"), 0, "funnels"
        ),
        _mapping_section("Candidates not published, per reason", _drops(stats), 1, "reason"),
        _section("Shares of the published set against their caps", _shares(stats)),
        _section("Splits and trust (what promote --min-trust checks)", splits_section(stats)),
        _mapping_section(
            "Not selected, per reason (no funnel, gates, redaction)",
            stats.get("not_selected"),
            1,
            "reason",
        ),
        _mapping_section("Dedup: clusters by size", sizes, 3, "cluster size", by_key=True),
        _section("Dedup: largest clusters and their members", _largest_clusters(stats)),
        _section("Dedup: borderline merges", _borderline(stats)),
        _section("Dedup: mixed pairs (review)", _mixed(stats)),
        _mapping_section("Redaction: entities replaced", stats.get("redaction"), 4, "entity type"),
        _mapping_section(
            "Quarantined by redaction, per reason", stats.get("redaction_quarantined"), 1, "reason"
        ),
        _section("Redaction: field inventory", _field_inventory(stats)),
        *coverage_parts,
        _section("Published cases and why each is in", _case_table(stats)),
        _section("Change against the parent version", _change(stats)),
        _section(
            "Coverage gap: this run's traffic with no case in the set", coverage_gap_section(stats)
        ),
        _section("Drift against the pinned version", _drift(stats)),
        _strength(stats),
        _section("Run time per stage (seconds)", _stage_times(stats)),
    ]
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>"
    )
