"""The `nightly` deployment for real: `prefect server start` on a loopback port, `prefect deploy`
from prefect.yaml, a triggered run of the deployment executed by a process worker against a
tiny corpus, and a published version at the end."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PREFECT = [sys.executable, "-m", "prefect"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, server: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"prefect server exited with {server.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError("prefect server did not become healthy")


def _prefect(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    done = subprocess.run(
        [*PREFECT, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real `prefect server start` on a loopback port, for this module's tests."""
    home = tmp_path_factory.mktemp("prefect-home")
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": api,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
        "PREFECT_UI_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "GOLDEN_DISTILL_HOME": str(REPO),
    }
    process = subprocess.Popen(
        [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env={k: v for k, v in env.items() if k != "PREFECT_API_URL"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_healthy(api, process)
        yield api, env
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def test_nightly_deployment_backfills_with_flat_parameters(
    server, tmp_path, corpus, pseudonym_key, write_config
):
    api, base_env = server
    env = {**base_env, "GOLDEN_PSEUDONYM_KEY": pseudonym_key}
    source, truth = corpus
    _prefect(env, "work-pool", "create", "golden-nightly", "--type", "process")
    _prefect(env, "--no-prompt", "deploy", "--name", "nightly")
    store = tmp_path / "store"
    config = write_config(tmp_path / "config.yaml", truth.opt_out_tenant)
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
    _prefect(env, "worker", "start", "--pool", "golden-nightly", "--run-once", timeout=600)

    runs = httpx.post(f"{api}/flow_runs/filter", json={"limit": 10}, timeout=10).json()
    triggered = [r for r in runs if r["parameters"].get("set_name") == "deployed"]
    assert len(triggered) == 1
    assert triggered[0]["parameters"]["since"].startswith("2026-11-01")
    assert triggered[0]["state_type"] == "COMPLETED", triggered[0]["state_name"]
    versions = list((store / "deployed" / "versions").iterdir())
    assert len(versions) == 1
    lineage = json.loads((versions[0] / "manifest.json").read_text())["lineage"]
    assert lineage["since"].startswith("2026-11-01") and lineage["until"].startswith("2026-12-01")


class _Receiver(http.server.BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_POST(self) -> None:  # http.server's method name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).received.append(json.loads(body or b"{}"))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_failed_run_fires_the_alert_webhook(server, tmp_path):
    _api, env = server
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{receiver.server_address[1]}/alert"
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
        deadline = time.monotonic() + 120
        while not _Receiver.received and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _Receiver.received, "the alert webhook was not called"
        alert = _Receiver.received[0]
        assert "distill" in alert["subject"] and "Failed" in alert["subject"]
        assert "validate" in alert["body"]  # the failed stage, from the state message
    finally:
        receiver.shutdown()
