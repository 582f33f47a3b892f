"""Dedup on real tau-bench runs (4 trials per task): tool paths decide, text only within a path.

The expected "same tool path" is computed here from the raw trajectories, independently of the
chat adapter and of dedup's own normalisation: the sequence of (tool name, reply starts with
"Error:") over the assistant's tool calls.

tau-bench's users are simulated by an LLM that words the same instruction differently on every
trial, so the first user messages of one task are further apart than the templated requests the
default (complete linkage at 0.35) is tuned for; the test uses the shipped chat profile
configs/tau-bench.yaml (average linkage at 0.55), as a user reading these runs would. Different
paths must stay apart under any profile and threshold, the default included.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import polars as pl
import pytest
from golden_test_data import airline_runs_path, all_runs_paths

from golden_distill.datasets.ingest import ingest
from golden_distill.filters.dedup import DedupConfig, cluster, signatures
from golden_distill.flows.config import load_pipeline_config

AIRLINE = airline_runs_path()
#: The shipped profile for free-form chat transcripts (configs/tau-bench.yaml).
PROFILE = load_pipeline_config(Path(__file__).resolve().parents[3] / "configs" / "tau-bench.yaml")
CONVERSATIONAL = PROFILE.dedup


def _raw_paths() -> dict[str, tuple[int, tuple[tuple[str, bool], ...], float]]:
    """trace id (as the chat adapter names runs) -> (task id, tool path, reward)."""
    out = {}
    for run in json.loads(AIRLINE.read_text()):
        failed = {
            m.get("tool_call_id"): str(m.get("content", "")).startswith("Error")
            for m in run["traj"]
            if m["role"] == "tool"
        }
        path = tuple(
            (call["function"]["name"], failed.get(call["id"], False))
            for m in run["traj"]
            if m["role"] == "assistant"
            for call in m.get("tool_calls") or []
        )
        out[f"task={run['task_id']}/trial={run['trial']}"] = (run["task_id"], path, run["reward"])
    return out


@pytest.fixture(scope="module")
def airline(tmp_path_factory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("tau-airline")
    ingest([str(AIRLINE)], out, fmt="chat")
    return pl.read_parquet(out / "cases")


def _same_task_pairs(frame: pl.DataFrame, cfg: DedupConfig):
    table = cluster(signatures(frame, cfg), cfg).table
    cluster_of = dict(zip(table["case_id"], table["cluster_id"], strict=True))
    paths = _raw_paths()
    runs = list(zip(frame["case_id"], frame["trace_id"], strict=True))
    for (case_a, trace_a), (case_b, trace_b) in itertools.combinations(runs, 2):
        task_a, path_a, reward_a = paths[trace_a]
        task_b, path_b, reward_b = paths[trace_b]
        if task_a == task_b:
            same = path_a == path_b and reward_a == reward_b
            yield same, cluster_of[case_a] == cluster_of[case_b]


def test_trials_on_the_same_tool_path_with_the_same_reward_cluster_together(airline):
    assert airline.height == 200
    outcomes = list(_same_task_pairs(airline, CONVERSATIONAL))
    same_path = [together for same, together in outcomes if same]
    assert len(same_path) >= 20  # the data has such trials; the test must not pass vacuously
    assert all(same_path)


@pytest.mark.parametrize(
    "cfg",
    [
        DedupConfig(),
        CONVERSATIONAL,
        DedupConfig(distance_threshold=1.0, linkage="single"),
    ],
    ids=["default", "conversational", "anything-goes"],
)
def test_trials_on_different_paths_or_rewards_never_cluster_together(airline, cfg):
    outcomes = list(_same_task_pairs(airline, cfg))
    different_path = [together for same, together in outcomes if not same]
    assert len(different_path) >= 100
    assert not any(different_path)


@pytest.fixture(scope="module")
def all_runs(tmp_path_factory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("tau-all")
    ingest([str(p) for p in all_runs_paths()], out, fmt="chat", config=PROFILE.ingest)
    return pl.read_parquet(out / "cases")


def _raw_runs() -> dict[tuple[str, str], dict]:
    """(file name, trace id) -> the raw run."""
    return {
        (path.name, f"task={run['task_id']}/trial={run['trial']}"): run
        for path in all_runs_paths()
        for run in json.loads(path.read_text())
    }


def _environment(file_name: str) -> str:
    return file_name.split("-")[0]  # airline-gpt-4o.json, retail-...json


@pytest.mark.parametrize(
    "cfg",
    [PROFILE.dedup, PROFILE.dedup.model_copy(update={"distance_threshold": 1.0})],
    ids=["profile", "threshold-1.0"],
)
def test_every_cluster_is_one_task_of_one_environment_with_one_outcome(all_runs, cfg):
    """The raw files say which task, environment and reward each run had: a cluster never mixes
    them, even with a threshold that ignores the text completely."""
    raw = _raw_runs()
    files = (
        all_runs.get_column("source")
        .struct.field("uri")
        .map_elements(lambda u: Path(u).name, return_dtype=pl.String)
    )
    facts = {
        case_id: (_environment(name), raw[(name, trace)]["task_id"], raw[(name, trace)]["reward"])
        for case_id, name, trace in zip(
            all_runs["case_id"], files, all_runs["trace_id"], strict=True
        )
    }
    table = cluster(signatures(all_runs, cfg), cfg).table
    per_cluster = table.group_by("cluster_id").agg("case_id")
    merged = 0
    for members in per_cluster.get_column("case_id").to_list():
        assert len({facts[c] for c in members}) == 1, [facts[c] for c in members]
        merged += len(members) > 1
    assert merged >= 20  # trials of one task still collapse
