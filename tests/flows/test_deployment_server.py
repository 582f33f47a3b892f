"""The `nightly` deployment and its alerts against a real `prefect server start`: the
deployment registered from prefect.yaml as the docs say, one run at a time (a second run waits
for the first's slot), and the alerts of configs/alerts.yaml, applied idempotently, firing for a
timed-out run, a late run nobody starts and a night without any completed run."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import yaml
from prefect_server import REPO, WebhookReceiver, prefect_cli, prefect_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """A server that marks runs Late after 1 s (instead of 15), evaluates proactive automations
    every second, and the `nightly` deployment registered by `prefect deploy`."""
    data = tmp_path_factory.mktemp("golden-data")
    with prefect_server(
        tmp_path_factory.mktemp("prefect-home"),
        PREFECT_SERVER_SERVICES_LATE_RUNS_AFTER_SECONDS="1",
        PREFECT_SERVER_SERVICES_LATE_RUNS_LOOP_SECONDS="1",
        PREFECT_SERVER_EVENTS_PROACTIVE_GRANULARITY="PT1S",
    ) as (api, env):
        env = {**env, "GOLDEN_DATA_DIR": str(data)}
        prefect_cli(env, "work-pool", "create", "golden-nightly", "--type", "process")
        prefect_cli(env, "--no-prompt", "deploy", "--name", "nightly")
        deployment = httpx.get(f"{api}/deployments/name/distill/nightly", timeout=10).json()
        yield api, env, deployment, data


def _create_run(api: str, deployment_id: str, **body: object) -> dict:
    answer = httpx.post(f"{api}/deployments/{deployment_id}/create_flow_run", json=body, timeout=10)
    answer.raise_for_status()
    return answer.json()


def _propose(api: str, run_id: str, state_type: str) -> dict:
    answer = httpx.post(
        f"{api}/flow_runs/{run_id}/set_state",
        json={"state": {"type": state_type}, "force": False},
        timeout=10,
    )
    answer.raise_for_status()
    return answer.json()


def test_deploy_fills_the_data_dir_and_the_flow_limits(deployed):
    _api, _env, deployment, data = deployed
    assert deployment["entrypoint"] == "golden_distill.flows.distill:distill"
    assert deployment["parameters"]["store_url"] == f"{data}/store"
    assert deployment["parameters"]["sources"] == [f"{data}/recordings/dt={{date}}/"]
    env = deployment["job_variables"]["env"]
    assert int(env["GOLDEN_FLOW_RETRIES"]) >= 1 and int(env["GOLDEN_FLOW_TIMEOUT_SECONDS"]) > 0


def test_a_second_run_waits_for_the_first_ones_slot(deployed):
    """What a worker does to start a run is propose Pending: the server accepts it for the
    first run and answers the second with AwaitingConcurrencySlot (it stays queued), until the
    first run is over."""
    api, _env, deployment, _data = deployed
    first = _create_run(api, deployment["id"], parameters={"set_name": "limit-a"})
    second = _create_run(api, deployment["id"], parameters={"set_name": "limit-b"})
    assert _propose(api, first["id"], "PENDING")["status"] == "ACCEPT"
    waiting = _propose(api, second["id"], "PENDING")
    assert waiting["status"] != "ACCEPT"
    assert waiting["state"]["name"] == "AwaitingConcurrencySlot"
    # the first run ends: its slot goes to the second
    assert _propose(api, first["id"], "RUNNING")["status"] == "ACCEPT"
    assert _propose(api, first["id"], "COMPLETED")["status"] == "ACCEPT"
    assert _propose(api, second["id"], "PENDING")["status"] == "ACCEPT"
    _propose(api, second["id"], "CANCELLED")


def _apply_alerts(env: dict[str, str], url: str, path: Path | None = None) -> str:
    args = ["alerts", "apply"] + (["--file", str(path)] if path else [])
    done = subprocess.run(
        [sys.executable, "-m", "golden_distill.flows.cli", *args],
        env={**env, "GOLDEN_ALERT_WEBHOOK_URL": url},
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _automation_names(api: str) -> list[str]:
    found = httpx.post(f"{api}/automations/filter", json={}, timeout=10).json()
    return sorted(a["name"] for a in found)


def test_alerts_apply_idempotently_and_fire_for_late_and_missed_runs(deployed, tmp_path):
    api, env, deployment, _data = deployed
    shipped = yaml.safe_load((REPO / "configs" / "alerts.yaml").read_text())
    names = sorted(a["name"] for a in shipped["automations"])
    with WebhookReceiver() as receiver:
        _apply_alerts(env, receiver.url)
        _apply_alerts(env, receiver.url)  # again: each automation exists once
        assert _automation_names(api) == names
        # the shipped automations with windows a test can wait for (the minimum, 10 s)
        for automation in shipped["automations"]:
            if automation["trigger"]["posture"] == "Proactive":
                automation["trigger"]["within"] = 10
        fast = tmp_path / "alerts.yaml"
        fast.write_text(yaml.safe_dump(shipped))
        _apply_alerts(env, receiver.url, fast)
        assert _automation_names(api) == names

        # a run due a minute ago that no worker picks up: Late, then not started in time
        due = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
        late = _create_run(
            api, deployment["id"], parameters={"set_name": "late"},
            state={"type": "SCHEDULED", "state_details": {"scheduled_time": due}},
        )  # fmt: skip
        alert = receiver.wait_for("late and not started", timeout=90)
        assert late["name"] in alert["body"]
        # nothing completed since the automations were applied: a missed night
        alert = receiver.wait_for("no completed run", timeout=60)
        assert "missed" in alert["body"]
        _propose(api, late["id"], "CANCELLED")


def test_a_run_past_its_timeout_ends_timed_out_and_alerts(
    deployed, tmp_path, corpus, pseudonym_key, write_config
):
    api, env, _deployment, _data = deployed
    source, truth = corpus
    config = write_config(tmp_path / "config.yaml", truth.opt_out_tenant)
    with WebhookReceiver() as receiver:
        _apply_alerts(env, receiver.url)
        slow = (
            "from golden_distill.flows.distill import distill\n"
            f"distill(config={str(config)!r}, sources=[{str(source)!r}], source_format='native',"
            f" store_url={str(tmp_path / 'store')!r}, set_name='timed')\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", slow],
            env={**env, "GOLDEN_PSEUDONYM_KEY": pseudonym_key, "GOLDEN_FLOW_TIMEOUT_SECONDS": "1"},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode != 0
        alert = receiver.wait_for("TimedOut")
        assert "distill" in alert["subject"]
    runs = httpx.post(f"{api}/flow_runs/filter", json={"limit": 50}, timeout=10).json()
    (timed,) = [r for r in runs if r["parameters"].get("set_name") == "timed"]
    assert timed["state_name"] == "TimedOut"
    assert not (tmp_path / "store" / "timed" / "_lock").exists()  # the set's lock was let go
