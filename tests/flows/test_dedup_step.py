"""The select step's dedup reads the shards' signatures bucket by bucket (flows/tasks/
dedup_step.py) and keeps the selection's large frames in the work folder (frame_ref.py): the
published version is the same whatever the bucket size, and whether a helper process clusters
some of the buckets."""

from __future__ import annotations

import polars as pl


def test_small_buckets_publish_what_one_bucket_does(
    pseudonym_key, corpus, tmp_path, write_config, monkeypatch
):
    """One bucket, many buckets in this process, and many buckets shared with a helper process
    (datasets/front_and_back.py) publish the same version."""
    from golden_distill.datasets import front_and_back
    from golden_distill.datasets.reader import open_set
    from golden_distill.filters.dedup import buckets
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams
    from golden_distill.flows.tasks import dedup_step

    source, truth = corpus
    common = {"sources": [str(source)], "source_format": "native", "store_url": str(tmp_path)}
    versions = {}
    plans = []
    plan_buckets = buckets.plan_buckets
    submitted: list[int] = []

    class CountingPool(front_and_back.ProcessPoolExecutor):
        def submit(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted[-1] += 1
            return super().submit(*args, **kwargs)

    def recorded(keys, cfg, bucket_rows=buckets.BUCKET_ROWS):  # type: ignore[no-untyped-def]
        plan = plan_buckets(keys, cfg, bucket_rows)
        plans.append(plan.buckets)
        return plan

    frozen: list[str] = []  # what the step asks to freeze (a no-op in this test's process)
    freeze = dedup_step.freeze_loaded_objects
    monkeypatch.setattr(
        dedup_step, "freeze_loaded_objects", lambda w: (frozen.append(w), freeze(w))
    )
    monkeypatch.setattr(front_and_back, "ProcessPoolExecutor", CountingPool)
    monkeypatch.setattr("golden_distill.flows.tasks.dedup_step.plan_buckets", recorded)
    runs = (("one", 10**9, True), ("many", 9, False), ("shared", 9, True))
    for name, rows, helper in runs:
        recorded.__defaults__ = (rows,)  # the step asks for the default bucket size
        submitted.append(0)
        monkeypatch.setattr(dedup_step, "TWO_PROCESSES_MAX_CANDIDATES", 10**9 if helper else 0)
        config = write_config(tmp_path / name / "config.yaml", truth.opt_out_tenant)
        params = DistillParams(config_path=str(config), set_name=name, **common)
        versions[name] = run_distill(params, local=True)
    assert plans[0] == 1 and plans[1] > 5 and plans[2] == plans[1]  # really in many buckets
    assert submitted[0] == submitted[1] == 0 and submitted[2] > 0  # the helper clustered some
    assert frozen == ["dedup step"] * 3  # before the buckets, in every run
    sets = {name: open_set(str(tmp_path), f"{name}@{versions[name]}") for name in versions}
    one = sets["one"]
    assert len(one) > 0
    for other in (sets["many"], sets["shared"]):
        assert one.manifest["content_sha256"] == other.manifest["content_sha256"]
        assert one.manifest["dedup"] == other.manifest["dedup"]
        for key in ("cluster_sizes", "largest_clusters", "borderline", "removed_by_dedup"):
            assert one.manifest["stats"][key] == other.manifest["stats"][key], key
        clusters = [pl.from_arrow(s.clusters()).sort("case_id") for s in (one, other)]
        assert clusters[0].equals(clusters[1])
