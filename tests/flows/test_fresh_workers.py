"""``PrefectEngine.fresh_workers`` (flows/engine.py): between the key pass and redaction a
process pool's workers are replaced, so the redaction never runs in a process that kept the key
pass's freed heap; a thread runner keeps its threads (nothing to spawn). Redaction is a lean
stage (``engine.LEAN_STAGES``): with a process pool its tasks run on the flow's threads and
their bodies in lean helper processes (flows/lean_helpers.py)."""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import pytest
from malloc_probe import where_a_block_comes_from_while_an_engine_runs
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from golden_distill.flows.lean_helpers import in_helper


@dataclass(frozen=True)
class _Job:
    index: int
    cache_key: str | None = None


@dataclass(frozen=True)
class _Ran:
    index: int
    pid: int
    label: str = "job"


def _body(job: _Job) -> _Ran:
    return _Ran(job.index, os.getpid())


@task(name="which-process", cache_policy=NO_CACHE)  # each phase runs (same inputs)
def _which_process(job: _Job) -> _Ran:
    return in_helper(_body, job)


@task(name="which-thread", cache_policy=NO_CACHE)
def _task_process(job: _Job) -> _Ran:
    return _Ran(job.index, os.getpid())


@pytest.mark.parametrize("runner", ["process", "thread"])
def test_the_next_phase_runs_in_fresh_worker_processes(
    prefect_api, tmp_path, write_config, runner
) -> None:
    from golden_distill.flows.engine import PrefectEngine
    from golden_distill.flows.params import DistillParams

    config = write_config(
        tmp_path / "config.yaml", "tenant-x", task_runner=runner, max_parallel_shards=2
    )
    resolved = DistillParams(config_path=str(config), sources=[str(tmp_path)]).resolve()

    @flow(name="fresh-workers")
    def two_phases() -> tuple[set[int], set[int], set[int]]:
        with PrefectEngine(resolved) as engine:
            jobs = [_Job(i) for i in range(4)]
            first, _ = engine.map(_which_process, jobs, "keys_done", "keys")
            engine.fresh_workers()
            second, _ = engine.map(_which_process, jobs, "redact_done", "redact")
            tasks, _ = engine.map(_task_process, jobs, "redact_done", "redact")
        pids = [{r.pid for r in phase.values()} for phase in (first, second, tasks)]
        return pids[0], pids[1], pids[2]

    before, after, redact_tasks = two_phases()
    if runner == "process":
        assert os.getpid() not in before | after
        assert before and after and not before & after  # other processes for the next phase
        assert redact_tasks == {os.getpid()}  # a lean stage's tasks: the flow's threads
    else:
        assert before == after == redact_tasks == {os.getpid()}  # the flow's own threads


def test_a_small_round_runs_its_tasks_in_one_helper(prefect_api, tmp_path, write_config) -> None:
    """``parallel=1`` (flows/redact_stage.py ``round_parallel``: a round of few cases): one task
    at a time, so one lean helper process is started, not one per worker."""
    from golden_distill.flows.engine import PrefectEngine
    from golden_distill.flows.params import DistillParams
    from golden_distill.flows.redact_stage import ONE_PROCESS_ROUND_CASES, round_parallel

    config = write_config(
        tmp_path / "config.yaml", "tenant-x", task_runner="process", max_parallel_shards=2
    )
    resolved = DistillParams(config_path=str(config), sources=[str(tmp_path)]).resolve()

    @flow(name="small-round")
    def one_round(parallel: int | None) -> set[int]:
        with PrefectEngine(resolved) as engine:
            done, _ = engine.map(
                _which_process, [_Job(i) for i in range(6)], "x", "redact", parallel
            )
        return {r.pid for r in done.values()}

    small = round_parallel(ONE_PROCESS_ROUND_CASES - 1)
    assert small == 1 and round_parallel(ONE_PROCESS_ROUND_CASES) is None
    helpers = one_round(small)
    assert len(helpers) == 1 and os.getpid() not in helpers


@pytest.mark.skipif(
    not hasattr(ctypes.CDLL(ctypes.util.find_library("c")), "mallinfo2"), reason="glibc only"
)
def test_the_flows_process_maps_large_blocks_while_its_engine_runs(tmp_path, write_config) -> None:
    """The key digests' merge and results unpickled from workers get their own mappings in the
    flow's process (flows/engine.py), returned when freed: a block right after a larger one was
    freed is mapped instead of extending the heap (a plain process extends it:
    tests/flows/test_lean_helpers.py). A fresh process, as the flow's own is at a run's start:
    this test session's heap holds free holes that would serve the block whatever the engine
    did."""
    config = write_config(tmp_path / "config.yaml", "tenant-x", task_runner="thread")
    fresh = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    with fresh:
        origin = fresh.submit(where_a_block_comes_from_while_an_engine_runs, str(config)).result()
    assert origin.mapped >= 2_000_000 and origin.heap_growth < 1_000_000
