"""A real S3-compatible server for tests: moto's server mode (``moto_server`` from PyPI) on a
free loopback port, reached through fsspec/s3fs exactly as a real bucket would be; no in-process
mocking of boto calls. When ``tests/services/s3.sh`` already started one
(``GOLDEN_TEST_S3_ENDPOINT``) it is reused. If the server cannot start, S3 tests skip locally but
FAIL when ``CI`` is set. Conftests use it with ``from s3_server import s3_endpoint``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"S3 server unavailable in CI: {message}")
    pytest.skip(f"S3 server unavailable: {message}")


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    given = os.environ.get("GOLDEN_TEST_S3_ENDPOINT")
    if given:
        if not _wait_for(given, 10):
            _unavailable(f"{given} does not answer")
        yield given
        return
    exe = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or shutil.which(
        "moto_server"
    )
    if exe is None:
        _unavailable("moto_server is not installed")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [exe, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if not _wait_for(url, 60):
            _unavailable(f"moto_server did not answer on {url}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
