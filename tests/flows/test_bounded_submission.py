"""Bounded submission (flows/bounded.py): a phase keeps only a few tasks submitted, so the
flow's memory does not grow with the number of shards, and nothing else changes: every job's
result arrives, progress is reported per task, an error still fails the run with its stage."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest

from golden_distill.flows.bounded import completed_bounded, in_flight_limit
from golden_distill.flows.run_config import FlowConfig


class _Tracked:
    """Submits to a thread pool and records the most tasks submitted and not yet finished."""

    def __init__(self, pool: ThreadPoolExecutor, work: Any) -> None:
        self.pool, self.work = pool, work
        self.submitted: list[int] = []
        self.unfinished = 0
        self.most = 0
        self.lock = threading.Lock()

    def _finished(self, _future: Any) -> None:
        with self.lock:
            self.unfinished -= 1

    def __call__(self, job: int) -> Any:
        with self.lock:
            self.submitted.append(job)
            self.unfinished += 1
            self.most = max(self.most, self.unfinished)
        future = self.pool.submit(self.work, job)
        future.add_done_callback(self._finished)  # runs before the bounded loop's callback
        return future


def _slow_square(job: int) -> int:
    time.sleep(0.002 * (job % 3))  # finish out of submission order
    return job * job


def test_every_job_completes_with_at_most_limit_in_flight():
    with ThreadPoolExecutor(max_workers=2) as pool:
        submit = _Tracked(pool, _slow_square)
        seen = [f.result() for f in completed_bounded(submit, range(25), limit=4)]
    assert sorted(seen) == [j * j for j in range(25)]
    assert submit.submitted == list(range(25))  # submitted in job order, each once
    assert submit.most == 4


def test_unbounded_submits_everything_first():
    with ThreadPoolExecutor(max_workers=2) as pool:
        submit = _Tracked(pool, _slow_square)
        flow = completed_bounded(submit, range(9), limit=None)
        first = next(flow)
        assert submit.submitted == list(range(9))  # all of them before the first result
        results = [first.result(), *(f.result() for f in flow)]
    assert sorted(results) == [j * j for j in range(9)]


def test_the_next_job_is_submitted_before_a_finished_one_is_handed_over():
    gate = threading.Event()

    def wait_for_gate(job: int) -> int:
        if job > 0:
            gate.wait(5)
        return job

    with ThreadPoolExecutor(max_workers=3) as pool:
        submit = _Tracked(pool, wait_for_gate)
        flow = completed_bounded(submit, range(5), limit=2)
        first = next(flow)
        # job 0 ended: job 2 is already on its way while the caller handles job 0
        assert first.result() == 0 and submit.submitted == [0, 1, 2]
        gate.set()
        assert sorted(f.result() for f in flow) == [1, 2, 3, 4]


def test_stopping_early_submits_nothing_more():
    def fail_on_one(job: int) -> int:
        if job == 1:
            raise ValueError("shard 1 is broken")
        time.sleep(0.05)
        return job

    with ThreadPoolExecutor(max_workers=2) as pool:
        submit = _Tracked(pool, fail_on_one)
        with pytest.raises(ValueError, match="shard 1"):
            for future in completed_bounded(submit, range(50), limit=2):
                future.result()
    assert len(submit.submitted) <= 4  # not 50: the rest was never submitted


def test_limit_is_twice_the_local_workers_and_open_for_a_remote_cluster():
    assert in_flight_limit(FlowConfig(task_runner="process", max_parallel_shards=3)) == 6
    assert in_flight_limit(FlowConfig(task_runner="dask", dask_workers=4)) == 8
    assert in_flight_limit(FlowConfig(dask_address="tcp://10.0.0.5:8786")) is None


# --- the engines, with a real Prefect flow (thread runner) and the local engine ---------


@dataclass
class _Job:
    index: int
    fail: bool = False
    cache_key: str | None = None
    out_dir: str = ""


@dataclass
class _Result:
    index: int
    label: str
    stats: dict[str, Any] = field(default_factory=dict)


def _work(job: _Job) -> _Result:
    if job.fail:
        raise RuntimeError(f"job {job.index} failed")
    time.sleep(0.001 * (job.index % 4))
    return _Result(index=job.index, label=f"s{job.index}", stats={"redacted": job.index % 2})


def _resolved(tmp_path, write_config, **run: Any) -> Any:
    from golden_distill.flows.params import DistillParams

    config = write_config(tmp_path / "config.yaml", "tenant-x", **run)
    params = DistillParams(config_path=str(config), sources=[str(tmp_path)])
    return params.resolve()


def _check_map(found: dict, hits: int, events: list, jobs: int) -> None:
    assert sorted(found) == list(range(jobs))
    assert all(found[i].label == f"s{i}" for i in range(jobs))
    assert hits == 0
    done = [d for e, d in events if e == "shard_done"]
    assert [d["done"] for d in done] == list(range(1, jobs + 1))
    assert {d["total"] for d in done} == {jobs}
    assert done[-1]["selected"] == sum(i % 2 for i in range(jobs))
    assert sorted(d["shard"] for d in done) == sorted(f"s{i}" for i in range(jobs))


def test_prefect_engine_map_keeps_results_progress_and_stage_errors(
    prefect_api, tmp_path, write_config, events
):
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    from golden_distill.flows.engine import PrefectEngine
    from golden_distill.flows.errors import StageError

    resolved = _resolved(tmp_path, write_config, max_parallel_shards=2)
    shard_task = task(name="bounded-test", cache_policy=NO_CACHE)(_work)

    @flow(name="bounded-map-test")
    def mapped(jobs: list[_Job]) -> tuple[dict, int]:
        with PrefectEngine(resolved) as engine:
            return engine.map(shard_task, jobs, "shard_done", "shard")

    found, hits = mapped([_Job(i) for i in range(11)])
    _check_map(found, hits, events, 11)

    jobs = [_Job(i, fail=(i == 6)) for i in range(11)]
    with pytest.raises(StageError) as failed:
        mapped(jobs)
    assert failed.value.stage == "shard" and "RuntimeError" in failed.value.detail


def test_local_engine_map_keeps_results_and_progress(tmp_path, write_config, events):
    from types import SimpleNamespace

    from golden_distill.flows.engine import LocalEngine
    from golden_distill.flows.errors import StageError

    resolved = _resolved(tmp_path, write_config, max_parallel_shards=2)
    engine = LocalEngine(resolved)
    found, hits = engine.map(
        SimpleNamespace(fn=_work), [_Job(i) for i in range(9)], "shard_done", "shard"
    )
    _check_map(found, hits, events, 9)
    with pytest.raises(StageError) as failed:
        engine.map(
            SimpleNamespace(fn=_work),
            [_Job(i, fail=i == 3) for i in range(9)],
            "shard_done",
            "shard",
        )
    assert failed.value.stage == "shard"


# --- pool workers replaced after a few tasks (flows/runners.py) ---------------------------


def _worker_pid(job: int) -> tuple[int, int]:
    import os

    return job, os.getpid()


def test_process_pool_workers_are_replaced_after_their_tasks(prefect_api):
    import os

    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    from golden_distill.flows.runners import RecyclingProcessPool, make_shard_runner

    assert isinstance(make_shard_runner(FlowConfig(task_runner="process")), RecyclingProcessPool)
    pid_task = task(name="worker-pid", cache_policy=NO_CACHE)(_worker_pid)

    @flow(name="recycling-pool-test")
    def pids() -> list[tuple[int, int]]:
        with RecyclingProcessPool(max_workers=1, tasks_per_worker=2) as pool:
            futures = [pool.submit(pid_task, {"job": j}) for j in range(4)]
            return [f.result() for f in futures]

    found = pids()
    assert [job for job, _ in found] == [0, 1, 2, 3]  # every task ran, results intact
    by_job = dict(found)
    assert by_job[0] == by_job[1] != by_job[2] == by_job[3]  # a fresh worker after 2 tasks
    assert os.getpid() not in by_job.values()


def test_process_runner_publishes_what_the_thread_runner_does(
    prefect_api, pseudonym_key, corpus, tmp_path, write_config, monkeypatch
):
    """The process runner: shard/redact tasks on recycled pool workers, a run's global select
    in a worker process of its own (whose result is read once it has exited), a bounded number
    of tasks in flight; same content."""
    import multiprocessing

    from prefect.futures import PrefectConcurrentFuture

    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams
    from golden_distill.flows.tasks.selection_result import Selection

    live_at_selection: list[int] = []  # child processes alive when the selection is read
    result = PrefectConcurrentFuture.result

    def watched(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        out = result(self, *args, **kwargs)
        if isinstance(out, Selection):
            live_at_selection.append(len(multiprocessing.active_children()))
        return out

    monkeypatch.setattr(PrefectConcurrentFuture, "result", watched)

    source, truth = corpus
    common = {"sources": [str(source)], "source_format": "native", "store_url": str(tmp_path)}
    by_thread = write_config(tmp_path / "thread" / "config.yaml", truth.opt_out_tenant)
    by_pool = write_config(
        tmp_path / "pool" / "config.yaml", truth.opt_out_tenant, task_runner="process"
    )
    thread_v = run_distill(DistillParams(config_path=str(by_thread), set_name="thread", **common))
    pool_params = DistillParams(config_path=str(by_pool), set_name="pool", **common)
    pool_v = run_distill(pool_params)
    thread_set = open_set(str(tmp_path), f"thread@{thread_v}")
    pool_set = open_set(str(tmp_path), f"pool@{pool_v}")
    assert len(pool_set) > 0
    assert pool_set.manifest["content_sha256"] == thread_set.manifest["content_sha256"]
    assert live_at_selection == [0]  # the select worker had exited (its memory freed)
