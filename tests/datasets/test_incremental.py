"""Growing a set (datasets/incremental.py): new near-duplicates join carried clusters, the
representative stays, sizes and last-seen grow, old clusters age out with a reason."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from golden_distill.datasets.incremental import (
    AGED_OUT,
    age_out,
    attach_new,
    carried_from_parent,
)

DAY = datetime(2026, 11, 28, tzinfo=UTC)


def _carried() -> pl.DataFrame:
    cases = pl.DataFrame(
        {
            "case_id": ["c_old1", "c_old2"],
            "cluster_id": ["cl_a", None],
            "cluster_size": [3, None],
            "recorded_at": [DAY, datetime(2026, 8, 1, tzinfo=UTC)],
        }
    )
    return carried_from_parent(cases, None)


def test_parent_cases_become_carried_clusters():
    carried = _carried()
    assert carried.get_column("cluster_id").to_list() == ["cl_a", "cl_c_old2"]
    assert carried.get_column("cluster_size").to_list() == [3, 1]


def test_old_clusters_leave_with_a_reason():
    kept, left = age_out(_carried(), datetime(2026, 12, 1, tzinfo=UTC), max_age_days=30)
    assert kept.get_column("case_id").to_list() == ["c_old1"]
    assert left.rows() == [("c_old2", "cl_c_old2", AGED_OUT)]
    same, none = age_out(_carried(), datetime(2026, 12, 1, tzinfo=UTC), max_age_days=None)
    assert same.height == 2 and none.height == 0


def test_new_members_join_the_carried_cluster_and_the_representative_stays():
    carried = _carried()
    joint = pl.DataFrame(  # a joint clustering: a new case ranked *better* than the carried one
        {
            "cluster_id": ["j1", "j1", "j1", "j2"],
            "case_id": ["c_new1", "c_old1", "c_new2", "c_new3"],
            "exact_hash": ["h1", "h2", "h3", "h4"],
            "role": ["representative", "member", "member", "representative"],
            "merged_by": ["self", "near", "exact", "self"],
            "distance_to_representative": [0.0, 0.1, 0.0, 0.0],
            "rank": [0, 1, 2, 0],
            "cluster_size": [3, 3, 3, 1],
        }
    )
    seen = pl.DataFrame(
        {
            "case_id": ["c_new1", "c_new2", "c_new3"],
            "recorded_at": [datetime(2026, 11, 30, tzinfo=UTC), DAY, DAY],
        }
    )
    grown, attached, fresh = attach_new(carried, joint, seen)
    row = grown.filter(pl.col("case_id") == "c_old1").row(0, named=True)
    assert row["cluster_id"] == "cl_a" and row["cluster_size"] == 5  # 3 + two new members
    assert row["last_seen"] == datetime(2026, 11, 30, tzinfo=UTC)
    assert sorted(attached.get_column("case_id").to_list()) == ["c_new1", "c_new2"]
    assert set(attached.get_column("cluster_id").to_list()) == {"cl_a"}
    assert fresh.get_column("case_id").to_list() == ["c_new3"]  # a new-only cluster
    untouched = grown.filter(pl.col("case_id") == "c_old2").row(0, named=True)
    assert untouched["cluster_size"] == 1
