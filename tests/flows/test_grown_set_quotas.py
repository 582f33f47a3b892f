"""Quotas apply to the grown set: three generated nights with a binding per-tenant cap, each run
growing the previous version (local mode: the same steps without Prefect).

After every night the published set respects the cap; new cases cut are counted per reason;
carried cases are never churned while the cap holds; a cap tightened on the third night sends
exactly the carried cases over it away, counted under `left_the_set.quota:tenant_max`.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from nights import NIGHTS, split_into_nights

pytestmark = pytest.mark.slow


def _tenants(store, version):
    from golden_distill.datasets.reader import open_set

    golden = open_set(str(store), f"nightly@{version}")
    table = golden.read_table().select(["case_id", "tenant_id"]).to_pylist()
    return {r["case_id"]: r["tenant_id"] for r in table}, golden.manifest["stats"]


def test_three_nights_with_a_binding_tenant_cap(pseudonym_key, corpus, tmp_path, write_config):
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    generated, truth = corpus
    recordings = tmp_path / "recordings"
    split_into_nights(generated, truth, recordings)
    config = write_config(tmp_path / "config.yaml", truth.opt_out_tenant)
    loaded = yaml.safe_load(config.read_text())
    cap = 3
    loaded["funnels"]["quotas"] = {"enabled": True, "per_tenant_max": cap}
    loaded["selection"] = {"max_age_days": None}
    config.write_text(yaml.safe_dump(loaded))
    params = DistillParams(
        config_path=str(config),
        sources=[str(recordings / "dt={date}")],
        source_format="native",
        store_url=str(tmp_path / "store"),
        set_name="nightly",
    )

    def night(day: str, cfg=config):
        since = datetime.fromisoformat(day).replace(tzinfo=UTC)
        until = since + timedelta(days=1)
        update = {"since": since, "until": until, "config_path": str(cfg)}
        return run_distill(params.model_copy(update=update), local=True)

    previous: dict[str, str] = {}
    cut_any = 0
    for day in NIGHTS[:2]:
        version = night(day)
        cases, stats = _tenants(tmp_path / "store", version)
        per_tenant = Counter(cases.values())
        assert max(per_tenant.values()) <= cap, per_tenant
        # nothing carried was churned, and each new case cut is counted under its reason
        assert set(previous) <= set(cases)
        assert stats.get("left_the_set", {}) == {}
        new_published = len(cases) - len(previous)
        if previous:
            grown = stats["incremental"]
            assert grown["carried"] == len(previous)
            assert grown["new_representatives"] == new_published
        cut = stats["cut_by_quotas"].get("tenant_max", 0)
        reps_before_quotas = stats["candidates"] - stats["removed_by_dedup"]
        if previous:
            reps_before_quotas -= stats["incremental"]["already_published"]
        assert cut == reps_before_quotas - new_published
        cut_any += cut
        assert sum(s["count"] for s in stats["shares"]["tenant"].values()) == len(cases)
        # shares name tenants as published (pseudonyms), never by their original ids
        assert set(stats["shares"]["tenant"]) == set(per_tenant)
        print(day, dict(per_tenant), stats["cut_by_quotas"], stats.get("incremental"))
        previous = cases
    assert cut_any > 0, "the cap never bound: the test would prove nothing"
    full = [t for t, n in Counter(previous.values()).items() if n == cap]
    assert full, "no tenant at the cap before the third night"

    # third night, cap tightened to 1: carried cases over it leave with the reason, exactly
    loaded["funnels"]["quotas"]["per_tenant_max"] = 1
    tighter = tmp_path / "tighter.yaml"
    tighter.write_text(yaml.safe_dump(loaded))
    version = night(NIGHTS[2], tighter)
    cases, stats = _tenants(tmp_path / "store", version)
    expected_left = sum(n - 1 for n in Counter(previous.values()).values() if n > 1)
    assert stats["left_the_set"] == {"quota:tenant_max": expected_left}
    assert stats["incremental"]["parent"]  # grown, not rebuilt (quotas are not shard config)
    per_tenant = Counter(cases.values())
    print(NIGHTS[2], dict(per_tenant), stats["cut_by_quotas"], stats["left_the_set"])
    assert max(per_tenant.values()) == 1
    # the tenants the carried cases had all keep one carried case: new cases were cut first
    kept_carried = {t for c, t in cases.items() if c in previous}
    assert kept_carried == set(previous.values())
