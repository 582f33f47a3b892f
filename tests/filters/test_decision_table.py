"""The decisions table: every case's last word (published, or why not), the member published in
a case's place, the split the confirmation gate holds a case out of; and its words."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.decision_table import COLUMNS, decision_table, explain


def _read() -> pl.LazyFrame:
    rows = [
        ("a", "selected", ["recovery"], 2.0),
        ("b", "selected", ["recovery"], 1.0),
        ("c", "no_funnel", [], 0.0),
        ("d", "gate:tenant_opted_out", ["recovery"], 1.0),
        ("e", "selected", ["human_handoff"], 1.0),
        ("f", "selected", ["human_handoff"], 1.0),
        ("g", "selected", ["recovery"], 3.0),
        ("a", "selected", ["recovery"], 2.0),  # read twice: its first row stands
    ]
    return pl.LazyFrame(rows, schema=["case_id", "status", "funnels", "value_score"], orient="row")


def test_each_case_says_why_and_who_stands_in_its_place() -> None:
    final = pl.DataFrame(
        {
            "case_id": ["a", "b", "e", "f", "g"],
            "status": ["selected", "dedup:near", "quota:max_cases", "selected", "selected"],
        }
    )
    membership = pl.DataFrame(
        {"case_id": ["a", "b", "g", "f"], "cluster_id": ["cl_1", "cl_1", "cl_2", "cl_3"]}
    )
    table = decision_table(
        _read(),
        final=final,
        membership=membership,
        published={"a", "e"},  # e: a refusal freed a share, the quotas admitted it
        refused={"g": "residual_pii"},
        rejected={"f"},
        held={"a"},
    )
    assert table.columns == list(COLUMNS)
    assert table.height == 7  # one row per case id
    status = dict(table.select("case_id", "status").iter_rows())
    assert status == {
        "a": "published",
        "b": "dedup:near",
        "c": "no_funnel",
        "d": "gate:tenant_opted_out",
        "e": "published",
        "f": "review:rejected",
        "g": "redaction:residual_pii",
    }
    by_id = {r["case_id"]: r for r in table.to_dicts()}
    assert by_id["b"]["replaced_by"] == "a" and by_id["b"]["cluster_id"] == "cl_1"
    assert by_id["a"]["replaced_by"] is None  # published itself
    assert by_id["g"]["replaced_by"] is None  # its cluster was lost
    assert by_id["a"]["held_from"] == "regression" and by_id["b"]["held_from"] is None
    words = explain(by_id["b"])
    assert "near duplicate" in words and "published in its place: a" in words
    assert "redaction refused it (residual_pii)" in explain(by_id["g"])
    assert "until a person confirms it" in explain(by_id["a"])


def test_carried_cases_published_or_let_go() -> None:
    carried = pl.DataFrame(
        {"case_id": ["p1", "p2", "p3"], "funnels": [["recovery"]] * 3, "value_score": [1.0] * 3}
    )
    left = pl.DataFrame({"case_id": ["p2", "p3"], "reason": ["aged_out", "quota:max_cases"]})
    table = decision_table(
        _read().filter(pl.col("case_id") == "c"), carried=carried, left=left, published={"p1"}
    )
    status = dict(table.select("case_id", "status").iter_rows())
    assert status == {
        "c": "no_funnel",
        "p1": "published",
        "p2": "left:aged_out",
        "p3": "left:quota:max_cases",
    }
    assert "left the set (aged_out)" in explain({"status": "left:aged_out"})
