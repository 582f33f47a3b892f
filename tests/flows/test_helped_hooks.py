"""flows/engine.py: tasks whose bodies run in lean helpers get the light hook
(``trim_after_helped_task``); every other task run releases its memory in full."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import pytest
from prefect import task

from golden_distill.flows import engine, runners
from golden_distill.flows.memory import release_after_task, trim_after_helped_task
from golden_distill.flows.run_config import FlowConfig


@task
def _noop(job: int) -> int:
    return job


def _hooks(helped: bool) -> list:
    resolved = SimpleNamespace(config=SimpleNamespace(run=FlowConfig()))
    options = engine._with_retries(_noop, resolved, storage="unused", helped=helped)  # type: ignore[arg-type]
    assert options.on_completion_hooks == options.on_failure_hooks
    return options.on_completion_hooks


def test_helped_tasks_only_trim_and_others_release_in_full() -> None:
    assert _hooks(helped=True) == [trim_after_helped_task]
    assert _hooks(helped=False) == [release_after_task]


@pytest.mark.parametrize(
    ("task_runner", "lean", "cached", "active"),
    [
        ("process", True, False, True),  # keys / redact on a local pool: bodies in helpers
        ("process", False, False, False),  # shard tasks: Prefect's own worker processes
        ("process", True, True, False),  # a cached phase: this process's threads
        ("thread", True, False, False),  # the thread runner runs bodies right here
    ],
)
def test_helpers_are_active_only_for_a_lean_phase_on_a_process_pool(
    monkeypatch: pytest.MonkeyPatch, task_runner: str, lean: bool, cached: bool, active: bool
) -> None:
    monkeypatch.setattr(runners, "workers_share_api", lambda needed=True: nullcontext(None))
    config = FlowConfig(task_runner=task_runner, max_parallel_shards=1)
    with runners.ShardRunners(config) as shard_runners:
        assert not shard_runners.helpers_active
        shard_runners.pick(likely_cached=cached, lean=lean)
        assert shard_runners.helpers_active is active
        shard_runners.release()
        assert not shard_runners.helpers_active
