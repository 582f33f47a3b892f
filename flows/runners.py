"""Choosing where shard tasks run, and pointing process-based workers at the running API.

A worker process (process pool or Dask) that finds no ``PREFECT_API_URL`` starts a private
ephemeral API server of its own: seconds of start-up and a SQLite database per worker, and task
runs the flow's server never sees. So before any worker starts, ``workers_share_api`` makes sure
an API is running (the same ephemeral server the flow itself uses, when there is no real one)
and exports its URL, in the settings context (serialised to every task) and in the environment
(inherited by worker processes at spawn).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner

from golden_distill.flows.run_config import FlowConfig


def current_api_url() -> str | None:
    return PREFECT_API_URL.value() or None


@contextmanager
def workers_share_api(needed: bool = True) -> Iterator[str | None]:
    """Within this block ``PREFECT_API_URL`` names a running API (starting the ephemeral one
    if there is none), so worker processes talk to it instead of booting their own."""
    url = current_api_url()
    if not needed or url:
        if url and needed:
            previous = os.environ.get("PREFECT_API_URL")
            os.environ["PREFECT_API_URL"] = url
            try:
                yield url
            finally:
                _restore_env("PREFECT_API_URL", previous)
        else:
            yield url
        return
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the same singleton Prefect's client starts on demand
    server.start()
    previous = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = server.api_url
    try:
        with temporary_settings({PREFECT_API_URL: server.api_url}):
            yield server.api_url
    finally:
        _restore_env("PREFECT_API_URL", previous)


def _restore_env(name: str, previous: str | None) -> None:
    if previous is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = previous


def is_process_based(run: FlowConfig) -> bool:
    return run.task_runner in ("process", "dask")


def make_shard_runner(run: FlowConfig) -> TaskRunner:
    """The task runner for shard tasks, as the `run:` config (or --dask-address) asks."""
    if run.task_runner == "dask":
        from prefect_dask import DaskTaskRunner

        if run.dask_address:
            return DaskTaskRunner(address=run.dask_address)
        return DaskTaskRunner(
            cluster_kwargs={
                "n_workers": run.dask_workers,
                "threads_per_worker": 1,
                "processes": True,
                "dashboard_address": None,
            }
        )
    if run.task_runner == "process":
        return ProcessPoolTaskRunner(max_workers=run.max_parallel_shards)
    return ThreadPoolTaskRunner(max_workers=run.max_parallel_shards)
