"""The dedup report: counts, histogram, per-funnel removals, largest clusters, no text."""

from __future__ import annotations

import orjson
from dedup_helpers import deduplicate

from golden_distill.filters.dedup.config import DedupConfig


def _cases(dsl):
    path = [dsl.read("erp_get_order", {"orderId": "A"}), dsl.write("erp_cancel_order", {})]
    other = [dsl.write("crm_apply_credit", {"amount": 5})]
    big = [
        dsl.case(f"big{i}", f"Cancel order ORD-{i} for Aaron Smith", path, funnels=["recovery"])
        for i in range(4)
    ]
    pair = [
        dsl.case(f"pair{i}", f"Credit {i} EUR to customer Zyxwvut", other, funnels=["handoff"])
        for i in range(2)
    ]
    single = [dsl.case("solo", "Something else entirely", [], funnels=[])]
    return big + pair + single


def test_report_counts_sizes_and_funnels(dsl):
    result = deduplicate(dsl.frame(_cases(dsl)), DedupConfig(report_largest=1))
    report = result.report
    assert report.cases_in == 7
    assert report.cases_kept == 3
    assert report.clusters == 3
    assert report.singletons == 1
    assert report.removed_exact == 4
    assert report.removed_near == 0
    assert report.size_histogram == {1: 1, 2: 1, 4: 1}
    assert report.removed_per_funnel == {"handoff": 1, "recovery": 3}
    assert len(report.largest) == 1
    top = report.largest[0]
    assert top.size == 4
    assert top.exact_members == 3
    assert top.trajectory == "erp_get_order:ok:R erp_cancel_order:ok:W"


def test_report_holds_no_request_text(dsl):
    report = deduplicate(dsl.frame(_cases(dsl))).report
    dumped = orjson.dumps(report.to_dict()).decode()
    for word in ("Aaron", "Smith", "Zyxwvut", "entirely", "Cancel order"):
        assert word not in dumped


def test_excluded_cases_are_not_counted_as_removed_by_dedup(dsl):
    cases = _cases(dsl)
    result = deduplicate(dsl.frame(cases), excluded_case_ids=["solo"])
    assert result.report.cases_kept == 2
    assert result.report.removed_exact + result.report.removed_near == 4


def test_largest_clusters_name_the_member_published_not_the_refused_one() -> None:
    from golden_distill.filters.dedup.report import mark_published
    from golden_distill.flows.report import render_report

    largest = [
        {"cluster_id": "cl_a", "size": 3, "trajectory": "get:ok:R", "outcome": "reward 1",
         "members": [
             {"case_id": "c_first", "role": "representative", "merged_by": "self",
              "distance": 0.0, "outcome": "reward 1"},
             {"case_id": "c_second", "role": "member", "merged_by": "near", "distance": 0.1,
              "outcome": "reward 1"},
             {"case_id": "c_third", "role": "member", "merged_by": "near", "distance": 0.2,
              "outcome": "reward 1"},
         ]},
        {"cluster_id": "cl_b", "size": 2, "trajectory": "get:ok:R", "outcome": "reward 1",
         "members": [
             {"case_id": "c_lost", "role": "representative", "merged_by": "self",
              "distance": 0.0, "outcome": "reward 1"},
         ]},
    ]  # fmt: skip
    marked = mark_published(largest, {"c_second"}, {"c_first", "c_lost"})
    roles = {m["case_id"]: m["role"] for c in marked for m in c["members"]}
    assert roles == {"c_first": "refused", "c_second": "published", "c_third": "member",
                     "c_lost": "refused"}  # fmt: skip
    assert [c["published"] for c in marked] == ["c_second", None]
    html = render_report({"largest_clusters": marked, "version": "2026.12.01.1"})
    assert "published: <code>c_second</code>" in html
    assert "published: none (no member could be published)" in html
    assert "<td>c_first</td><td>refused</td>" in html
    assert "version 2026.12.01.1" in html
