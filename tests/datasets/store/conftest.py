"""Fixtures for the store tests: small generated golden sets, and a real S3-compatible server.

The S3 server is moto's server mode (``moto_server`` from PyPI) on a free loopback port, reached
through fsspec/s3fs exactly as a real bucket would be; no in-process mocking of boto calls. When
``tests/services/s3.sh`` already started one (``GOLDEN_TEST_S3_ENDPOINT``) it is reused. If the
server cannot start, S3 tests skip locally but FAIL when ``CI`` is set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

FACTORY_PATH = Path(__file__).with_name("factory.py")


def load_factory() -> ModuleType:
    """The case factory module, loaded by path (no test folder is on sys.path)."""
    spec = importlib.util.spec_from_file_location("golden_store_test_factory", FACTORY_PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


factory = load_factory()
make_table = factory.make_table
build_case = factory.build_case
cases_table = factory.cases_table


@dataclass(frozen=True)
class StoreTarget:
    """Where a test publishes: a local folder or a fresh bucket on the S3 server."""

    kind: str
    url: str
    storage_options: dict[str, Any] | None

    def kwargs(self) -> dict[str, Any]:
        return {"storage_options": self.storage_options}

    def cli_args(self) -> list[str]:
        """The `--store`/`--storage-options` arguments of a CLI call against this store."""
        args = ["--store", self.url]
        if self.storage_options:
            args += ["--storage-options", json.dumps(self.storage_options)]
        return args


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


def s3_options(endpoint: str) -> dict[str, Any]:
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": endpoint, "region_name": "eu-west-1"},
    }


def new_bucket(endpoint: str) -> StoreTarget:
    import s3fs

    options = s3_options(endpoint)
    bucket = f"golden-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(**options).mkdir(bucket)
    return StoreTarget("s3", f"s3://{bucket}/store", options)


@pytest.fixture(params=["local", pytest.param("s3", marks=[pytest.mark.s3, pytest.mark.slow])])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> StoreTarget:
    if request.param == "local":
        return StoreTarget("local", str(tmp_path / "store"), None)
    return new_bucket(request.getfixturevalue("s3_endpoint"))


@pytest.fixture
def casegen() -> ModuleType:
    """The case factory: ``make_table(n, start)``, ``build_case(i)``, ``cases_table(cases)``."""
    return factory
