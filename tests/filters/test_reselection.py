"""What redaction's refusals and review decisions change after the select step
(filters/reselection.py): plain functions the flow only wires."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.reselection import (
    Next,
    after_round,
    carried_left,
    grown_statuses,
    review_left_out,
)


def test_after_round() -> None:
    assert after_round({"a"}, False, grown=False, can_requota=True) is Next.AGAIN
    assert after_round({"a"}, False, grown=True, can_requota=True) is Next.FULL
    assert after_round({"a"}, False, grown=False, can_requota=False) is Next.FULL
    assert after_round(set(), True, grown=True, can_requota=False) is Next.FULL
    assert after_round(set(), False, grown=False, can_requota=True) is Next.SHARES


def test_review_leaves_out_the_same_content_under_another_id() -> None:
    new = pl.DataFrame({"case_id": ["a", "b", "c"], "exact_hash": ["h1", "h2", "h1"]})
    carried = pl.DataFrame({"case_id": ["p"], "exact_hash": ["h1"]})
    no_hashes = pl.DataFrame({"case_id": ["z"]})
    out = review_left_out({"x"}, {"h1"}, [new, carried, no_hashes])
    assert out == {"x", "a", "c", "p"}
    assert review_left_out({"x"}, set(), [new]) == {"x"}


def test_grown_statuses_and_carried_left() -> None:
    statuses = grown_statuses(
        pl.Series(["n1", "n2", "n3", "n4"]),
        representatives=pl.Series(["n1", "n2"]),
        kept=pl.Series(["n1"]),
        cut=pl.DataFrame({"case_id": ["n2"], "reason": ["quota:max_cases"]}),
        rejected={"n4"},
    )
    assert dict(statuses.iter_rows()) == {
        "n1": "selected",
        "n2": "quota:max_cases",
        "n3": "dedup:near",
        "n4": "review:rejected",
    }
    left = carried_left(
        pl.Series(["p1", "p2", "p3", "p4"]),
        pl.Series(["p1"]),
        quota_left=pl.DataFrame({"case_id": ["p2"], "reason": ["quota:tenant_max"]}),
        aged_out=pl.DataFrame({"case_id": ["p3"], "reason": ["aged_out"]}),
    )
    assert dict(left.iter_rows()) == {
        "p2": "quota:tenant_max",
        "p3": "aged_out",
        "p4": "review:rejected",
    }
