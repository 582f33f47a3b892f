"""The select step's dedup reads the shards' signatures bucket by bucket (flows/tasks/
dedup_step.py) and keeps the selection's large frames in the work folder (frame_ref.py): the
published version is the same whatever the bucket size."""

from __future__ import annotations

import polars as pl


def test_small_buckets_publish_what_one_bucket_does(
    pseudonym_key, corpus, tmp_path, write_config, monkeypatch
):
    from golden_distill.datasets.reader import open_set
    from golden_distill.filters.dedup import buckets
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    source, truth = corpus
    common = {"sources": [str(source)], "source_format": "native", "store_url": str(tmp_path)}
    versions = {}
    plans = []
    plan_buckets = buckets.plan_buckets

    def recorded(keys, cfg, bucket_rows=buckets.BUCKET_ROWS):  # type: ignore[no-untyped-def]
        plan = plan_buckets(keys, cfg, bucket_rows)
        plans.append(plan.buckets)
        return plan

    monkeypatch.setattr("golden_distill.flows.tasks.dedup_step.plan_buckets", recorded)
    for name, rows in (("one", 10**9), ("many", 9)):
        recorded.__defaults__ = (rows,)  # the step asks for the default bucket size
        config = write_config(tmp_path / name / "config.yaml", truth.opt_out_tenant)
        params = DistillParams(config_path=str(config), set_name=name, **common)
        versions[name] = run_distill(params, local=True)
    assert plans[0] == 1 and plans[1] > 5  # really clustered in many buckets
    one = open_set(str(tmp_path), f"one@{versions['one']}")
    many = open_set(str(tmp_path), f"many@{versions['many']}")
    assert len(one) > 0 and one.manifest["content_sha256"] == many.manifest["content_sha256"]
    assert one.manifest["dedup"] == many.manifest["dedup"]
    for key in ("cluster_sizes", "largest_clusters", "borderline", "removed_by_dedup"):
        assert one.manifest["stats"][key] == many.manifest["stats"][key], key
    clusters = [pl.from_arrow(s.clusters()).sort("case_id") for s in (one, many)]
    assert clusters[0].equals(clusters[1])
