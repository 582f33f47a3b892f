"""Dedup never merges different work, exact duplicates included: the task, the outcome and the
tenant partition the candidates before any merging (filters/dedup/signature.py ``work_key``);
same-content runs of different work are listed as mixed pairs (filters/dedup/borderline.py)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from golden_distill.datasets.ingest import ingest
from golden_distill.filters.dedup import DedupConfig, cluster, signatures
from golden_distill.filters.dedup.borderline import mixed_pairs
from golden_distill.filters.dedup.buckets import PLAN_COLUMNS, plan_buckets

CFG = DedupConfig()


def _transcript(**meta: object) -> dict:
    """One chat transcript: the same request and tool path every time, ``meta`` aside."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_order_details", "arguments": '{"order_id": "#W1"}'},
    }
    messages = [
        {"role": "user", "content": "Where is my order #W1? It has not arrived yet."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "get_order_details",
         "content": '{"status": "shipped"}'},
        {"role": "assistant", "content": "It has shipped."},
    ]  # fmt: skip
    return {"messages": messages, **meta}


BASE = {"tenant_id": "t-1", "reward": 1.0, "trace_id": "task=100/trial=0"}


def _signatures(tmp_path: Path, records: list[dict]) -> pl.DataFrame:
    source = tmp_path / "runs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    ingest([str(source)], tmp_path / "cases", fmt="chat")
    cases = pl.read_parquet(tmp_path / "cases" / "cases").sort("case_id")
    return signatures(cases, CFG)


def _clusters(sigs: pl.DataFrame) -> int:
    return cluster(sigs, CFG).table.get_column("cluster_id").n_unique()


def test_identical_runs_of_the_same_work_are_exact_duplicates(tmp_path):
    sigs = _signatures(tmp_path, [_transcript(**BASE), _transcript(**BASE)])
    table = cluster(sigs, CFG).table
    assert table.get_column("cluster_id").n_unique() == 1
    assert sorted(table.get_column("merged_by")) == ["exact", "self"]
    assert mixed_pairs(sigs).height == 0


@pytest.mark.parametrize(
    ("change", "differs"),
    [
        ({"tenant_id": "t-2"}, "tenant"),
        ({"reward": 0.0}, "outcome"),
        ({"trace_id": "task=200/trial=0"}, "task"),
        ({"trace_id": "task=200/trial=0", "reward": 0.0}, "task, outcome"),
    ],
)
def test_same_transcript_different_work_stays_apart_and_is_listed(tmp_path, change, differs):
    sigs = _signatures(tmp_path, [_transcript(**BASE), _transcript(**{**BASE, **change})])
    assert sigs.get_column("content_hash").n_unique() == 1  # the same run, word for word
    assert sigs.get_column("exact_hash").n_unique() == 2
    assert _clusters(sigs) == 2
    # however loose the near-duplicate threshold
    loose = DedupConfig(distance_threshold=1.0, linkage="single")
    assert cluster(sigs, loose).table.get_column("cluster_id").n_unique() == 2
    mixed = mixed_pairs(sigs)
    assert mixed.height == 1
    assert mixed.row(0, named=True)["differs"] == differs
    assert {mixed["case_id"][0], mixed["other"][0]} == set(sigs["case_id"])


def test_an_unrecorded_reward_is_a_success(tmp_path):
    no_reward = {k: v for k, v in BASE.items() if k != "reward"}
    sigs = _signatures(tmp_path, [_transcript(**BASE), _transcript(**no_reward)])
    assert _clusters(sigs) == 1


def test_tau_bench_task_id_comes_from_the_record_id(tmp_path):
    """The two-run case of the issue: one transcript, task 100 reward 1, task 200 reward 0."""
    traj = _transcript()["messages"]
    runs = [
        {"task_id": 100, "trial": 0, "reward": 1.0, "info": {}, "traj": traj},
        {"task_id": 200, "trial": 0, "reward": 0.0, "info": {}, "traj": traj},
    ]
    source = tmp_path / "runs.json"
    source.write_text(json.dumps(runs))
    ingest([str(source)], tmp_path / "cases", fmt="chat")
    sigs = signatures(pl.read_parquet(tmp_path / "cases" / "cases"), CFG)
    assert _clusters(sigs) == 2
    assert mixed_pairs(sigs).get_column("differs").to_list() == ["task, outcome"]
    # only the outcome differs once the task is the same
    same_task = [dict(r, task_id=100) for r in runs]
    source.write_text(json.dumps(same_task))
    ingest([str(source)], tmp_path / "cases2", fmt="chat")
    sigs = signatures(pl.read_parquet(tmp_path / "cases2" / "cases"), CFG)
    assert mixed_pairs(sigs).get_column("differs").to_list() == ["outcome"]


def test_bucketed_path_keeps_the_partition_and_lists_the_same_pairs(tmp_path):
    variants = [
        {}, {}, {"tenant_id": "t-2"}, {"reward": 0.0}, {"trace_id": "task=200/trial=1"},
        {"tenant_id": "t-2"}, {"reward": 0.5},
    ]  # fmt: skip
    sigs = _signatures(tmp_path, [_transcript(**{**BASE, **v}) for v in variants])
    whole = cluster(sigs, CFG).table
    plan = plan_buckets(sigs.select(PLAN_COLUMNS), CFG, bucket_rows=2)
    assert plan.buckets > 1
    parts = [
        cluster(sigs.join(plan.bucket(i), on=["case_id", "exact_hash"], how="semi"), CFG).table
        for i in range(plan.buckets)
    ]
    bucketed = pl.concat([p for p in parts if p.height]).sort(["cluster_id", "rank"])
    assert bucketed.equals(whole)
    assert whole.get_column("cluster_id").n_unique() == 5
    assert mixed_pairs(sigs.select(PLAN_COLUMNS)).equals(mixed_pairs(sigs))
    assert mixed_pairs(sigs).height == 4
