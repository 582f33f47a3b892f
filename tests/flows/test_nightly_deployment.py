"""The `nightly` deployment for real: `prefect server start` on a loopback port, `prefect deploy`
from prefect.yaml, a triggered run of the deployment executed by a process worker on a private
Dask LocalCluster against a tiny corpus, a published version at the end and a quiet log."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
from prefect_server import REPO, WebhookReceiver, prefect_cli, prefect_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real `prefect server start` on a loopback port, for this module's tests."""
    with prefect_server(tmp_path_factory.mktemp("prefect-home")) as (api, env):
        yield api, env


_prefect = prefect_cli


def test_nightly_deployment_backfills_on_a_dask_cluster_with_a_quiet_log(
    server, tmp_path, corpus, pseudonym_key, write_config
):
    api, base_env = server
    env = {**base_env, "GOLDEN_PSEUDONYM_KEY": pseudonym_key}
    source, truth = corpus
    _prefect(env, "work-pool", "create", "golden-nightly", "--type", "process")
    _prefect(env, "--no-prompt", "deploy", "--name", "nightly")
    store = tmp_path / "store"
    # the shard and redaction tasks on a private LocalCluster of two worker processes, which
    # import the flow's code by the deployment's module entrypoint
    config = write_config(
        tmp_path / "config.yaml", truth.opt_out_tenant, task_runner="dask", dask_workers=2
    )
    # a backfill sets single fields; the generated runs are recorded on 2026-11-2x
    out = _prefect(
        env, "deployment", "run", "distill/nightly",
        "-p", f"config={config}",
        "-p", f"sources={json.dumps([str(source)])}",
        "-p", "source_format=native",
        "-p", f"store_url={store}",
        "-p", "set_name=deployed",
        "-p", "since=2026-11-01",
        "-p", "until=2026-12-01",
    )  # fmt: skip
    assert "Created flow run" in out
    log = _prefect(env, "worker", "start", "--pool", "golden-nightly", "--run-once", timeout=600)

    runs = httpx.post(f"{api}/flow_runs/filter", json={"limit": 10}, timeout=10).json()
    triggered = [r for r in runs if r["parameters"].get("set_name") == "deployed"]
    assert len(triggered) == 1
    assert triggered[0]["parameters"]["since"].startswith("2026-11-01")
    assert triggered[0]["state_type"] == "COMPLETED", triggered[0]["state_name"]
    versions = list((store / "deployed" / "versions").iterdir())
    assert len(versions) == 1
    lineage = json.loads((versions[0] / "manifest.json").read_text())["lineage"]
    assert lineage["since"].startswith("2026-11-01") and lineage["until"].startswith("2026-12-01")
    # a successful night logs the pipeline's lines: one cluster for all phases, no library
    # chatter, no traceback, no line per task hook
    # the run's own lines, as the API keeps them (the worker's copy of its child's output can
    # lose its tail when the worker exits on a loaded machine)
    logs = httpx.post(
        f"{api}/logs/filter",
        json={"logs": {"flow_run_id": {"any_": [triggered[0]["id"]]}}, "limit": 200},
        timeout=10,
    ).json()
    run_log = "\n".join(entry["message"] for entry in logs)
    # one cluster for every phase (the line is the task runner's, in the worker's copy only)
    worker_saw_run = "published deployed@" in log
    assert log.count("Creating a new Dask cluster") == int(worker_saw_run), log[-3000:]
    assert "shard_done" in run_log and "redact_done" in run_log, run_log[-3000:]
    assert "published deployed@" in run_log, run_log[-3000:]
    for noise in ("Traceback", "CommClosedError", "| distributed.", "Running hook", "Hook '"):
        assert noise not in log, f"{noise!r} in the run's log:\n{log[-3000:]}"


def test_a_failed_run_fires_the_alert_webhook(server, tmp_path):
    _api, env = server
    with WebhookReceiver() as receiver:
        url = receiver.url
        applied = subprocess.run(
            [sys.executable, "-m", "golden_distill.flows.cli", "alerts", "apply"],
            env={**env, "GOLDEN_ALERT_WEBHOOK_URL": url},
            cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert applied.returncode == 0, applied.stderr
        assert "golden-nightly-failed" in applied.stdout
        assert url not in (REPO / "configs" / "alerts.yaml").read_text()
        # a run of the flow that fails inside Prefect (its config does not exist)
        failing = (
            "from golden_distill.flows.distill import distill\n"
            f"distill(config={str(tmp_path / 'missing.yaml')!r}, sources=['x'])\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", failing], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode != 0
        alert = receiver.wait_for("Failed")
        assert "distill" in alert["subject"]
        assert "validate" in alert["body"]  # the failed stage, from the state message
