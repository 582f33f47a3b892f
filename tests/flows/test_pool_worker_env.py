"""Local pool workers (shard, key pass, redact) start with ``runners.POOL_WORKER_ENV`` (empty by
default: polars' eager release cost the shard stage too much), and the flow's own environment is
restored when the pool is released."""

from __future__ import annotations

import os
from contextlib import nullcontext

import pytest

from golden_distill.flows import runners
from golden_distill.flows.memory import EAGER_RELEASE
from golden_distill.flows.run_config import FlowConfig

NAME = "_RJEM_MALLOC_CONF"


def test_pool_workers_start_with_the_pool_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NAME, raising=False)
    monkeypatch.setattr(runners, "POOL_WORKER_ENV", EAGER_RELEASE)
    # no Prefect API server for this test: only the worker processes' environment matters
    monkeypatch.setattr(runners, "workers_share_api", lambda needed=True: nullcontext(None))
    with runners.ShardRunners(FlowConfig(task_runner="process", max_parallel_shards=1)) as rs:
        pool = rs.pick(likely_cached=False)
        assert isinstance(pool, runners.RecyclingProcessPool)
        executor = pool._executor
        assert executor is not None
        # a real worker process of the pool reports the environment it started with
        seen = executor.submit(os.getenv, NAME).result(timeout=120)
        assert seen == EAGER_RELEASE[NAME]
        rs.release()
        assert NAME not in os.environ  # the flow's environment is as it was


def test_a_value_the_user_set_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, "dirty_decay_ms:5000")
    monkeypatch.setattr(runners, "workers_share_api", lambda needed=True: nullcontext(None))
    with runners.ShardRunners(FlowConfig(task_runner="process", max_parallel_shards=1)) as rs:
        pool = rs.pick(likely_cached=False)
        seen = pool._executor.submit(os.getenv, NAME).result(timeout=120)  # type: ignore[union-attr]
        assert seen == "dirty_decay_ms:5000"
    assert os.environ[NAME] == "dirty_decay_ms:5000"
