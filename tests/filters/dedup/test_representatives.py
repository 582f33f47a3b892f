"""Representative choice, k per cluster, and replacement of excluded (quarantined) ones."""

from __future__ import annotations

import polars as pl
import pytest
from dedup_helpers import deduplicate

from golden_distill.filters.dedup.cluster import cluster
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.representatives import choose_representatives
from golden_distill.filters.dedup.signature import signatures

TEXT = "Please refund order ORD-{n}, it arrived damaged"


def _family(dsl, specs):
    """specs: (case_id, value_score, minutes, extra_read, text_suffix)."""
    cases = []
    for case_id, score, minutes, extra, suffix in specs:
        steps = [dsl.read("erp_get_order", {"orderId": "A"})]
        if extra:  # a second lookup of a *different* tool would change the block: repeat one
            steps.append(dsl.read("erp_get_order", {"orderId": "B"}))
        steps.append(dsl.write("fin_issue_refund", {"orderId": "A", "amount": 1}))
        cases.append(
            dsl.case(
                case_id, TEXT.format(n=minutes) + suffix, steps, value_score=score, minutes=minutes
            )
        )
    return cases


LOOSE = DedupConfig(max_trajectory_distance=0.5, distance_threshold=0.5)


def _table(dsl, specs, cfg=LOOSE):
    return cluster(signatures(dsl.frame(_family(dsl, specs)), cfg), cfg).table


def test_highest_value_score_wins(dsl):
    table = _table(dsl, [("a", 0.2, 0, False, ""), ("b", 0.9, 1, False, ""), ("c", None, 2, 0, "")])
    assert table.filter(pl.col("rank") == 0).item(0, "case_id") == "b"
    assert table.filter(pl.col("case_id") == "c").item(0, "rank") == 2  # missing score is last


def test_then_most_distinct_tools_then_earliest(dsl):
    # "x" and "y" tie on score; "x" has one more distinct tool (a different extra read)
    cases = _family(dsl, [("x", 0.5, 5, False, ""), ("y", 0.5, 1, False, ""), ("z", 0.5, 2, 0, "")])
    cases[0].steps.insert(1, cases[0].steps[0].__class__(
        seq=9, kind="tool", name="erp_get_inventory", occurrence=1, arguments="{}", status="ok",
        is_mutating=False))  # fmt: skip
    cfg = DedupConfig(
        max_trajectory_distance=0.8, distance_threshold=0.6, block_on_read_tools=False
    )
    table = cluster(signatures(dsl.frame(cases), cfg), cfg).table
    assert table.get_column("cluster_id").n_unique() == 1
    order = table.sort("rank").get_column("case_id").to_list()
    assert order == ["x", "y", "z"]  # x: most tools; then y (earlier) before z


def test_excluded_representative_is_replaced_by_the_next_member(dsl):
    table = _table(dsl, [("a", 0.9, 0, False, ""), ("b", 0.5, 1, False, ""), ("c", 0.1, 2, 0, "")])
    kept = choose_representatives(table)
    assert kept.get_column("case_id").to_list() == ["a"]
    assert not kept.item(0, "replaces_excluded")
    again = choose_representatives(table, excluded_case_ids=["a"])
    assert again.get_column("case_id").to_list() == ["b"]
    assert again.item(0, "replaces_excluded")
    assert again.item(0, "cluster_size") == 3
    assert choose_representatives(table, excluded_case_ids=["a", "b", "c"]).height == 0


def test_keep_k_prefers_different_exact_groups(dsl):
    # a, b: exact duplicates (same request, other ids); c: a near duplicate with more text
    table = _table(
        dsl,
        [("a", 0.9, 0, False, ""), ("b", 0.8, 1, False, ""), ("c", 0.1, 2, False, " Thanks!")],
    )
    assert table.get_column("cluster_id").n_unique() == 1
    kept = choose_representatives(table, keep_per_cluster=2)
    assert kept.get_column("case_id").to_list() == ["a", "c"]
    assert choose_representatives(table, keep_per_cluster=5).height == 3


def test_keep_per_cluster_must_be_positive(dsl):
    table = _table(dsl, [("a", 0.9, 0, False, "")])
    with pytest.raises(ValueError, match="keep_per_cluster"):
        choose_representatives(table, keep_per_cluster=0)


def test_deduplicate_sets_cluster_fields_on_kept_rows(dsl):
    cases = _family(dsl, [("a", 0.9, 0, False, ""), ("b", 0.5, 1, False, ""), ("c", 0.1, 2, 1, "")])
    frame = dsl.frame(cases)
    result = deduplicate(frame, LOOSE)
    reps = result.representatives
    assert reps.get_column("case_id").to_list() == ["a"]
    assert reps.item(0, "cluster_size") == 3
    assert reps.item(0, "cluster_id") == result.clusters.item(0, "cluster_id")
    assert reps.columns == frame.columns  # GOLDEN_SCHEMA order kept
    replaced = deduplicate(frame, LOOSE, excluded_case_ids=["a"])
    assert replaced.representatives.get_column("case_id").to_list() == ["b"]
    assert replaced.report.replaced_representatives == 1


def test_disabled_dedup_keeps_every_case(dsl):
    cases = _family(dsl, [("a", 0.9, 0, False, ""), ("b", 0.5, 1, False, "")])
    result = deduplicate(dsl.frame(cases), DedupConfig(enabled=False))
    assert sorted(result.representatives.get_column("case_id").to_list()) == ["a", "b"]
    assert (result.representatives.get_column("cluster_size") == 1).all()
