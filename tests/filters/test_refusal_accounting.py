"""Redaction refusals are accounted for: replaced, or the cluster lost (filters/
refusal_accounting.py); selected - lost + admitted == published, always."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.refusal_accounting import describe, refusal_accounting


def _frame(pairs: list[tuple[str, str | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        {"case_id": [c for c, _ in pairs], "cluster_id": [k for _, k in pairs]},
        schema={"case_id": pl.String, "cluster_id": pl.String},
    )


def _adds_up(counts: dict) -> None:
    assert counts["selected"] - counts["lost"] + counts["admitted"] == counts["published"]


def test_a_refused_singleton_is_a_lost_cluster():
    first = _frame([("a", "A"), ("s", "S")])
    counts = refusal_accounting(first, _frame([("a", "A")]), {"s"})
    assert counts == {
        "selected": 2, "refused": 1, "refused_selected": 1, "replaced": 0, "lost": 1,
        "clusters_lost": 1, "admitted": 0, "published": 1,
    }  # fmt: skip
    _adds_up(counts)
    assert describe(counts) == (
        "1 of 2 selected cases published; redaction refused 1: 0 replaced by the next member "
        "of their cluster, 1 cluster(s) lost"
    )


def test_a_refused_representative_with_another_member_is_replaced():
    first = _frame([("a", "A"), ("b1", "B")])
    published = _frame([("a", "A"), ("b2", "B")])  # b2: the next member of b1's cluster
    counts = refusal_accounting(first, published, {"b1"})
    assert (counts["replaced"], counts["lost"], counts["clusters_lost"]) == (1, 0, 0)
    assert counts["published"] == counts["selected"] == 2
    _adds_up(counts)


def test_a_refused_replacement_loses_the_cluster_and_counts_both_refusals():
    first = _frame([("a", "A"), ("b1", "B")])
    counts = refusal_accounting(first, _frame([("a", "A")]), {"b1", "b2"})
    assert counts["refused"] == 2 and counts["refused_selected"] == 1
    assert (counts["replaced"], counts["clusters_lost"]) == (0, 1)
    _adds_up(counts)


def test_quotas_admitting_another_cluster_after_a_loss_add_up():
    first = _frame([("a", "A"), ("s", "S")])
    published = _frame([("a", "A"), ("c", "C")])  # the lost case's share went to cluster C
    counts = refusal_accounting(first, published, {"s"})
    assert (counts["lost"], counts["admitted"], counts["published"]) == (1, 1, 2)
    _adds_up(counts)
    assert "1 admitted by the quotas" in describe(counts)


def test_without_dedup_each_case_is_its_own_cluster():
    first = _frame([("a", None), ("b", None)])
    counts = refusal_accounting(first, _frame([("a", None)]), {"b"})
    assert (counts["clusters_lost"], counts["published"]) == (1, 1)
    _adds_up(counts)


def test_nothing_refused():
    first = _frame([("a", "A")])
    counts = refusal_accounting(first, first, set())
    assert counts["refused"] == 0 and counts["published"] == 1
    assert describe(counts) == "1 of 1 selected cases published"
