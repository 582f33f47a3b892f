"""The `nightly` deployment for real: `prefect server start` on a loopback port, `prefect deploy`
from prefect.yaml, a triggered run of the deployment executed by a process worker against a
tiny corpus, and a published version at the end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
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


def test_nightly_deployment_runs_on_a_real_server(tmp_path, corpus, pseudonym_key, write_config):
    source, truth = corpus
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "PREFECT_API_URL": api,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
        "PREFECT_UI_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "GOLDEN_DISTILL_HOME": str(REPO),
        "GOLDEN_PSEUDONYM_KEY": pseudonym_key,
    }
    server = subprocess.Popen(
        [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env={k: v for k, v in env.items() if k != "PREFECT_API_URL"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_healthy(api, server)
        _prefect(env, "work-pool", "create", "golden-nightly", "--type", "process")
        _prefect(env, "--no-prompt", "deploy", "--name", "nightly")
        store = tmp_path / "store"
        config = write_config(tmp_path / "config.yaml", truth.opt_out_tenant)
        params = {
            "params": {
                "config_path": str(config),
                "sources": [str(source)],
                "source_format": "native",
                "store_url": str(store),
                "set_name": "deployed",
            }
        }
        out = _prefect(env, "deployment", "run", "distill/nightly", "--params", json.dumps(params))
        assert "Created flow run" in out
        _prefect(env, "worker", "start", "--pool", "golden-nightly", "--run-once", timeout=600)

        runs = httpx.post(f"{api}/flow_runs/filter", json={"limit": 10}, timeout=10).json()
        triggered = [
            r for r in runs if r["parameters"].get("params", {}).get("set_name") == "deployed"
        ]
        assert len(triggered) == 1
        assert triggered[0]["state_type"] == "COMPLETED", triggered[0]["state_name"]
        versions = list((store / "deployed" / "versions").iterdir())
        assert len(versions) == 1 and (versions[0] / "manifest.json").is_file()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
