"""A real `prefect server start` on a free loopback port, and a local webhook receiver, for the
tests that exercise the deployment, its concurrency limit and the alert automations."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
PREFECT = [sys.executable, "-m", "prefect"]


def free_port() -> int:
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


@contextmanager
def prefect_server(home: Path, **settings: str) -> Iterator[tuple[str, dict[str, str]]]:
    """``(api_url, env)``: a server bound to 127.0.0.1 with ``settings`` in its environment;
    ``env`` points a client (CLI, worker, flow run) at it."""
    port = free_port()
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
        # an operator's shell: an in-process `golden run` of an earlier test sets
        # PREFECT_LOGGING_LEVEL=CRITICAL in this process, which must not silence the runs here
        "PREFECT_LOGGING_LEVEL": "INFO",
        **settings,
    }
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env={k: v for k, v in env.items() if k != "PREFECT_API_URL"},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        try:
            _wait_healthy(api, process)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}:\n{(home / 'server.log').read_text()[-3000:]}") from None
        yield api, env
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def prefect_cli(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    """Run a `prefect` command from the repository; its output (stdout, then stderr)."""
    done = subprocess.run(
        [*PREFECT, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


class WebhookReceiver:
    """An HTTP server on a loopback port that keeps the JSON bodies POSTed to it."""

    def __init__(self) -> None:
        received: list[dict] = []
        self.received = received

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's method name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append(json.loads(body or b"{}"))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/alert"

    def __enter__(self) -> WebhookReceiver:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait_for(self, text: str, timeout: float = 120) -> dict:
        """The first alert whose subject contains ``text`` (waiting up to ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for alert in list(self.received):
                if text in alert.get("subject", ""):
                    return alert
            time.sleep(0.5)
        subjects = [a.get("subject") for a in self.received]
        raise AssertionError(f"no alert with {text!r} in its subject; received: {subjects}")
