"""Redaction runs a few shards per task (Prefect's own cost of a task run is paid per task):
every shard in exactly one group, in order, the last ones alone; a group's cache key follows its
shards'; a shard whose redaction is already in its folder is not redacted again when another
shard of its group changed; and grouping changes nothing that is published."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.redact_stage import chosen_by_shard, redact_jobs
from golden_distill.flows.tasks import redact, redact_body
from golden_distill.flows.tasks.jobs import RedactJob, ShardResult
from golden_distill.flows.tasks.redact import (
    REDACT_SHARDS_PER_TASK,
    SINGLE_SHARD_TASKS_PER_WORKER,
    group_redact_jobs,
    redact_shards,
)


def _job(n: int, key: str | None = "k") -> RedactJob:
    return RedactJob(
        index=n * 100,
        label=f"shard-{n:03d}",
        candidates_path=f"/w/shards/{n}/candidates.parquet",
        case_ids=(f"c_{n}",),
        config=PipelineConfig(),
        out_dir=f"/w/shards/{n}/redacted-x",
        cache_key=None if key is None else f"{key}{n:063d}",
    )


def test_every_shard_in_one_group_in_order_the_last_ones_alone() -> None:
    jobs = [_job(n) for n in range(23)]
    groups = group_redact_jobs(jobs, workers=2)
    assert [j for g in groups for j in g.jobs] == jobs  # each exactly once, in order
    singles = 2 * SINGLE_SHARD_TASKS_PER_WORKER
    assert all(len(g.jobs) == 1 for g in groups[-singles:])
    assert all(1 < len(g.jobs) <= REDACT_SHARDS_PER_TASK for g in groups[:-singles])
    assert len(groups) < len(jobs) // 2
    assert [g.index for g in groups] == [g.jobs[0].index for g in groups]  # unique indices
    assert groups[0].label == "shard-000 +3 shard(s)" and groups[-1].label == "shard-022"
    assert group_redact_jobs(jobs[:3], workers=2) == [
        g for g in group_redact_jobs(jobs[:3], workers=2) if len(g.jobs) == 1
    ]


def test_a_groups_cache_key_follows_its_shards_only() -> None:
    jobs = [_job(n) for n in range(12)]
    before = group_redact_jobs(jobs, workers=2)
    assert before == group_redact_jobs(list(jobs), workers=2)  # same jobs, same groups and keys
    changed = list(jobs)
    changed[1] = _job(1, key="z")  # one shard's chosen cases changed
    after = group_redact_jobs(changed, workers=2)
    differ = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert differ == [0]  # only the group holding it
    assert before[0].cache_key != after[0].cache_key and before[0].cache_key
    uncached = group_redact_jobs([_job(0), _job(1, key=None), *jobs[2:]], workers=2)
    assert uncached[0].cache_key is None and uncached[1].cache_key == before[1].cache_key


def _shard(tmp_path: Path, n: int) -> ShardResult:
    folder = tmp_path / "shards" / f"s{n}"
    folder.mkdir(parents=True)
    rows = [
        {
            "case_id": f"c_{n}_{i}",
            "tenant_id": f"tenant-{n}{i}",
            "user_input": f"order ORD-{n}{i}00",
        }
        for i in range(4)
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=CASE_SCHEMA), folder / "candidates.parquet")
    return ShardResult(
        index=n,
        label=f"shard-{n}",
        cache_key=f"{n}" * 64,
        candidates_path=str(folder / "candidates.parquet"),
        signatures_path="",
        decisions_path="",
        quarantine_path="",
    )


def test_a_shard_already_redacted_is_taken_from_its_folder(
    tmp_path: Path, pseudonym_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = PipelineConfig.model_validate({"run": {"work_dir": str(tmp_path)}})
    prepared = SimpleNamespace(resolved=SimpleNamespace(config=config), key_id=None)
    shards = [_shard(tmp_path, n) for n in range(2)]
    monkeypatch.setattr(redact, "SINGLE_SHARD_TASKS_PER_WORKER", 0)  # both shards in one task
    calls: list[str] = []
    real = redact_body._redact
    monkeypatch.setattr(
        redact_body, "_redact", lambda job, *a: calls.append(job.label) or real(job, *a)
    )

    def run(ids: list[str]) -> list:
        chosen = chosen_by_shard(prepared, shards, pl.Series(ids, dtype=pl.String), set())
        (group,) = group_redact_jobs(redact_jobs(prepared, chosen, 0, ""), workers=2)
        assert len(group.jobs) == 2
        return redact_shards.fn(group).results

    first = run(["c_0_0", "c_0_1", "c_1_0"])
    assert calls == ["shard-0", "shard-1"]
    again = run(["c_0_0", "c_0_1", "c_1_0", "c_1_2"])  # shard 1's chosen cases changed
    assert calls == ["shard-0", "shard-1", "shard-1"]  # shard 0 was not redacted again
    assert again[0].redacted_path == first[0].redacted_path
    assert again[0].stats == first[0].stats and again[0].quarantined == first[0].quarantined
    assert again[1].redacted_path != first[1].redacted_path
    assert pq.read_table(again[1].redacted_path).num_rows == 2
    Path(first[0].redacted_path).unlink()  # its files gone: redacted again, not reused
    run(["c_0_0", "c_0_1", "c_1_0", "c_1_2"])
    assert calls == ["shard-0", "shard-1", "shard-1", "shard-0"]


def _cached_values() -> int:
    from golden_distill.redaction.pseudonym import key_pseudonym, value_token

    return key_pseudonym.cache_info().currsize + value_token.cache_info().currsize


def test_a_shard_of_a_group_starts_with_no_value_the_shard_before_saw(
    tmp_path: Path, pseudonym_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the shards of one task, the caches of values are emptied
    (redaction/process_caches.py), as at the end of a task."""
    config = PipelineConfig.model_validate({"run": {"work_dir": str(tmp_path)}})
    prepared = SimpleNamespace(resolved=SimpleNamespace(config=config), key_id=None)
    shards = [_shard(tmp_path, n) for n in range(2)]
    monkeypatch.setattr(redact, "SINGLE_SHARD_TASKS_PER_WORKER", 0)
    seen: list[tuple[str, int, int]] = []  # (shard, cached values at its start, at its end)
    real = redact_body._redact

    def counting(job, *a):
        start = _cached_values()
        out = real(job, *a)
        seen.append((job.label, start, _cached_values()))
        return out

    monkeypatch.setattr(redact_body, "_redact", counting)
    chosen = chosen_by_shard(prepared, shards, pl.Series(["c_0_0", "c_1_0"]), set())
    (group,) = group_redact_jobs(redact_jobs(prepared, chosen, 0, ""), workers=2)
    redact_shards.fn(group)
    (first, first_start, first_end), (second, second_start, _) = seen
    assert (first, second) == ("shard-0", "shard-1")
    assert first_end > first_start  # shard 0 cached pseudonyms of its tenant ids ...
    assert second_start == 0  # ... and shard 1 started without them


@pytest.mark.slow
def test_grouped_redaction_publishes_what_one_shard_per_task_publishes(
    prefect_api, pseudonym_key, corpus, tmp_path, events, shard_events, write_config, monkeypatch
) -> None:
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    generated, truth = corpus

    def publish(name: str) -> tuple[pa.Table, list[dict]]:
        config = write_config(tmp_path / name / "config.yaml", truth.opt_out_tenant)
        params = DistillParams(
            config_path=str(config),
            sources=[str(generated)],
            source_format="native",
            store_url=str(tmp_path / name / "store"),
            set_name="groups",
        )
        events.clear()
        version = run_distill(params)
        (cases,) = (tmp_path / name / "store").glob(f"groups/versions/{version}/cases.parquet")
        tasks = shard_events(events, "redact_done")
        events.clear()  # the same run again: every group from the cache
        assert run_distill(params) == version
        assert all(d["cached"] for d in shard_events(events, "redact_done"))
        return pq.read_table(cases), tasks

    monkeypatch.setattr(redact, "SINGLE_SHARD_TASKS_PER_WORKER", 0)
    grouped, grouped_tasks = publish("grouped")
    monkeypatch.setattr(redact, "REDACT_SHARDS_PER_TASK", 1)
    single, single_tasks = publish("single")
    assert len(grouped_tasks) == 1 and len(single_tasks) > 1  # every shard with cases: 1 task
    assert grouped_tasks[-1]["selected"] == single_tasks[-1]["selected"]
    assert grouped.num_rows > 0 and grouped.equals(single)


def _freeze_in_child() -> tuple[int, int]:
    import gc

    from golden_distill.flows.memory import freeze_loaded_objects

    before = gc.get_freeze_count()
    freeze_loaded_objects("test")
    freeze_loaded_objects("test")  # once per process and what was loaded
    return before, gc.get_freeze_count()


def test_loaded_objects_are_frozen_once_in_workers_never_in_the_flow() -> None:
    import gc
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from golden_distill.flows.memory import freeze_loaded_objects

    before = gc.get_freeze_count()
    freeze_loaded_objects("test")  # this process has no parent process: not a worker
    assert gc.get_freeze_count() == before
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        in_child, after = pool.submit(_freeze_in_child).result()
    assert in_child == 0 and after > 1000
