"""Diffs and drift between two versions: content changes only, largest shifts first."""

from __future__ import annotations

import itertools
import json

import polars as pl

from golden_distill.filters.drift import case_changes, drift


def _version(build, moved: bool = False, changed: bool = False) -> pl.DataFrame:
    s = build.step
    cases = [
        build.case(f"c{i}", [s(0, "erp_create_order", write=True), s(1, "kb_search")],
                   tenant="t0" if i < 3 else "t1")
        for i in range(4)
    ]  # fmt: skip
    frame = build.frame(cases).with_columns(
        funnels=pl.lit(["high_value_mutating"]),
        funnel_reasons=pl.lit(json.dumps({"high_value_mutating": "1 write call"})),
        value_score=pl.lit(1.0),
        cluster_size=pl.lit(1, dtype=pl.Int32),
        cluster_id=pl.lit("cl_a"),
    )
    if moved:  # the same runs, read from another file at other positions; another cluster name
        frame = frame.with_columns(
            pl.col("source").struct.with_fields(uri=pl.lit("elsewhere.jsonl")),
            cluster_id=pl.lit("cl_b"),
        )
    if changed:
        frame = frame.with_columns(
            cluster_size=pl.when(pl.col("case_id") == "c1").then(3).otherwise(1).cast(pl.Int32),
            tenant_id=pl.lit("t1"),
        )
    return frame


def test_a_moved_recording_is_not_a_changed_case(build):
    assert case_changes(_version(build), _version(build, moved=True)) == []


def test_changed_cases_say_what_changed_before_and_after(build):
    changes = case_changes(_version(build), _version(build, changed=True))
    by_id = {c["case_id"]: c for c in changes}
    assert set(by_id) == {"c0", "c1", "c2"}  # tenant moved for c0-c2; c3 was already t1
    assert by_id["c1"]["detail"]["cluster_size"] == {"before": 1, "after": 3}
    assert "tenant_id" in by_id["c0"]["changed"] and "steps" not in by_id["c0"]["changed"]


def test_drift_lists_largest_shifts_first(build):
    rows = drift(_version(build), _version(build, changed=True))
    assert rows[0]["dimension"] == "tenant" and abs(rows[0]["shift"]) == 0.75
    assert {r["value"] for r in rows if r["dimension"] == "tenant"} == {"t0", "t1"}
    assert all(abs(a["shift"]) >= abs(b["shift"]) for a, b in itertools.pairwise(rows))


def test_drift_from_the_projected_columns_equals_drift_from_whole_cases(build, tmp_path):
    """The flow reads only DRIFT_PATHS of each version (flows/tasks/earlier_versions.py): the same
    drift as over the whole cases, also for a file made before `split`/`trust` existed."""
    import pyarrow.parquet as pq

    from golden_distill.flows.tasks.earlier_versions import _drift_columns

    before = _version(build).with_columns(redaction=pl.lit('{"PERSON": 2}'))
    after = _version(build, changed=True).with_columns(split=pl.lit("dev"), trust=pl.lit("oracle"))
    old = tmp_path / "old.parquet"
    new = tmp_path / "new.parquet"
    before.drop([c for c in ("split", "trust") if c in before.columns]).write_parquet(old)
    after.write_parquet(new)
    projected = drift(_drift_columns([pq.ParquetFile(old)]), _drift_columns([pq.ParquetFile(new)]))
    whole = drift(pl.read_parquet(old), pl.read_parquet(new))
    assert projected == whole and any(r["dimension"] == "split" for r in whole)
