"""The report renderer: self-contained, escaped, and shows every count it is given."""

from __future__ import annotations

import re

from golden_distill.flows.report import counts_rows, render_report
from golden_distill.flows.report.svg import bar_chart

STATS = {
    "set_name": "nightly",
    "version": "2026.11.30.1",
    "records_read": 1200,
    "cases_read": 1180,
    "in_window": 1180,
    "quarantined": {"invalid_json": 15, "missing_field": 5},
    "funnels": {"high_value_mutating": 210, "recovery": 95, "human_handoff": 60},
    "funnel_overlaps": {"high_value_mutating+recovery": 12},
    "candidates": 340,
    "cut_by_quotas": {"per_tenant": 40},
    "removed_by_dedup": 70,
    "cluster_sizes": {"1": 200, "3": 20, "7": 2},
    "redaction": {"EMAIL_ADDRESS": 88, "PERSON": 41},
    "redaction_quarantined": {"verification_failed": 1},
    "published": 229,
    "published_per_funnel": {"high_value_mutating": 150, "recovery": 70, "human_handoff": 40},
    "coverage": {"tenant": {"t_ab12": 120, "t_cd34": 109}, "tool": {"erp_get_order": 200}},
    "change": {"parent": "2026.11.29.1", "added": 30, "removed": 12, "kept": 199},
    "stage_seconds": {"shards": 12.5, "publish": 1.25},
}


def test_report_is_self_contained_html_with_inline_svg():
    html = render_report(STATS)
    assert html.startswith("<!DOCTYPE html>")
    assert "<svg" in html
    # nothing to fetch: no scripts, no external resources
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html


def test_report_shows_the_counts_it_is_given():
    html = render_report(STATS)
    for needle in (
        "1,200",
        "invalid_json",
        "high_value_mutating+recovery",
        "EMAIL_ADDRESS",
        "2026.11.29.1",
        "t_ab12",
        "erp_get_order",
        "verification_failed",
    ):
        assert needle in html, needle
    assert "229" in html


def test_report_escapes_every_label():
    stats = {**STATS, "quarantined": {"<img src=x onerror=alert(1)>": 1}, "set_name": "<b>x"}
    html = render_report(stats)
    assert "<img" not in html and "<b>x" not in html
    assert "&lt;img" in html


def test_report_renders_with_almost_no_stats():
    html = render_report({"set_name": "empty"})
    assert "nothing to show" in html
    assert "<svg" not in html


def test_bar_chart_scales_to_the_largest_value():
    svg = bar_chart("t", [("a", 10), ("b", 5)])
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == 2 * widths[1]
    assert bar_chart("t", []) == ""


def test_counts_rows_cover_every_section():
    rows = counts_rows(STATS)
    sections = {r["section"] for r in rows}
    assert {
        "totals",
        "quarantined",
        "selected per funnel",
        "funnel overlap",
        "cut by quotas",
        "clusters of size",
        "redacted entities",
        "coverage by tenant",
        "change vs parent",
    } <= sections
    assert {"section": "totals", "item": "removed by dedup", "count": 70} in rows
    assert all(isinstance(r["count"], int) for r in rows)


def test_cluster_size_histogram_is_in_size_order():
    html = render_report({"cluster_sizes": {"10": 50, "1": 200, "2": 4, "3": 20}})
    section = html[html.index("clusters by size") :]
    positions = [section.index(f">size {n}<") for n in (1, 2, 3, 10)]
    assert positions == sorted(positions)


def test_case_table_keeps_the_first_cases_by_id_and_counts_them_all(monkeypatch):
    """The flow keeps only the rows the page shows (not a Python row per published case), and
    the page says how many cases there are in all."""
    import polars as pl

    from golden_distill.flows.tasks import run_stats

    monkeypatch.setattr(run_stats, "CASE_TABLE_ROWS", 3)
    parts = []
    for ids in (["c-09", "c-03", "c-07", "c-05"], ["c-02", "c-08", "c-04"]):
        frame = pl.DataFrame(
            {
                "case_id": ids,
                "funnel_reasons": ['{"recovery": "retried"}'] * len(ids),
                "value_score": [0.5] * len(ids),
                "funnels": [["recovery"]] * len(ids),
                "tenant_id": ["t"] * len(ids),
                "steps": [[{"name": "lookup", "system": "crm"}]] * len(ids),
            }
        )
        parts.append(run_stats.published_stats(frame))
    assert [len(p["case_table"]) for p in parts] == [3, 3]
    merged = run_stats.merge_published_stats(parts)
    assert merged["published"] == 7
    assert [r["case_id"] for r in merged["case_table"]] == ["c-02", "c-03", "c-04"]
    html = render_report({**merged, "case_table": merged["case_table"]})
    assert "c-02" in html and "c-09" not in html
    monkeypatch.setattr("golden_distill.flows.report.render.CASE_ROWS", 2)
    assert re.search(r"First 2 of 7 by case id", render_report(merged))
