"""Quotas over a grown set (filters/grown_quotas.py): carried cases keep their places when a cap
binds, carried cases over a tightened cap leave with a reason, tenants are compared only in the
published (pseudonym) space."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.grown_quotas import (
    PENDING,
    grown_quotas,
    left_counts,
    tenant_keys,
)


def _rows(prefix: str, tenants: list[str], score: float) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "case_id": [f"{prefix}{i}" for i in range(len(tenants))],
            "tenant_id": tenants,
            "signature": pl.Series([i for i in range(len(tenants))], dtype=pl.UInt64),
            "value_score": [score] * len(tenants),
            "funnels": [["failures"]] * len(tenants),
        }
    )


def _funnels(**quotas: object) -> FunnelsConfig:
    return FunnelsConfig.model_validate({"quotas": quotas})


def test_carried_cases_keep_their_places_and_new_ones_are_cut_first():
    carried = _rows("old", ["T-1", "T-1", "T-2"], score=0.1)  # worse scores than the new ones
    new = _rows("new", ["T-1", "T-2", "T-2", "T-3"], score=9.0)
    got = grown_quotas(carried, new, _funnels(per_tenant_max=2))
    assert got.left.height == 0  # no carried case churned
    # T-1 is full (2 carried); T-2 has one place left; T-3 is new
    kept = sorted(got.kept_new.to_list())
    assert kept[-1] == "new3" and kept[:-1] in (["new1"], ["new2"])
    assert got.cut_new == {"tenant_max": 2}
    assert got.kept == 5
    # ranked as a rebuild ranks them, the better new cases displace carried ones
    flat = _funnels(per_tenant_max=2, stratify_by_signature=False)
    ranked = grown_quotas(carried, new, flat, carried_first=False)
    assert ranked.kept_new.len() == 4  # every better new case; one T-1 and the T-2 case leave
    left = ranked.left.get_column("case_id").to_list()
    assert len(left) == 2 and "old2" in left
    assert set(ranked.left.get_column("reason").to_list()) == {"quota:tenant_max"}


def test_a_tightened_cap_sends_carried_cases_away_with_the_reason():
    carried = _rows("old", ["T-1"] * 4 + ["T-2"], score=1.0)
    got = grown_quotas(carried, _rows("new", ["T-1"], 5.0), _funnels(per_tenant_max=1))
    assert got.left.height == 3 and got.kept_new.len() == 0
    assert left_counts(2, got.left) == {"aged_out": 2, "quota:tenant_max": 3}
    capped = grown_quotas(carried, _rows("new", ["T-9"], 5.0), _funnels(max_cases=3))
    assert left_counts(0, capped.left) == {"quota:max_cases": 2}
    assert capped.cut_new == {"max_cases": 1}


def test_fractions_are_shares_of_the_grown_set():
    carried = _rows("old", ["T-1", "T-2", "T-3", "T-4"], score=1.0)
    new = _rows("new", ["T-1", "T-1", "T-5", "T-6"], score=5.0)
    got = grown_quotas(carried, new, _funnels(per_tenant_max=0.25))
    kept_tenants = (
        pl.concat([carried, new])
        .filter(pl.col("case_id").is_in(["old0", "old1", "old2", "old3", *got.kept_new]))
        .get_column("tenant_id")
    )
    assert kept_tenants.value_counts().get_column("count").max() <= max(1, 0.25 * got.kept)


def test_new_tenants_compare_only_once_their_pseudonym_is_known():
    carried = _rows("old", ["T-1"], score=1.0)  # published: a pseudonym
    new = _rows("new", ["T-1"], score=1.0)  # the original id, which happens to read the same
    before = grown_quotas(carried, tenant_keys(new, {}), _funnels(per_tenant_max=1))
    assert before.kept_new.to_list() == ["new0"]  # not counted against the pseudonym T-1
    assert PENDING in before.shares["tenant"]
    assert not any("\x00" in t for t in before.shares["tenant"])  # no original id in a report
    after = grown_quotas(carried, tenant_keys(new, {"new0": "T-1"}), _funnels(per_tenant_max=1))
    assert after.kept_new.len() == 0 and after.cut_new == {"tenant_max": 1}
