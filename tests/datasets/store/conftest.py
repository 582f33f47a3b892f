"""Fixtures for the store tests: small generated golden sets, and a real S3-compatible server.

The S3 server is moto's server mode (``moto_server`` from PyPI) on a free loopback port, reached
through fsspec/s3fs exactly as a real bucket would be; no in-process mocking of boto calls. When
``tests/services/s3.sh`` already started one (``GOLDEN_TEST_S3_ENDPOINT``) it is reused. If the
server cannot start, S3 tests skip locally but FAIL when ``CI`` is set.
"""

from __future__ import annotations

import importlib.util
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import s3_server

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


s3_endpoint = s3_server.s3_endpoint  # the session's S3 server (tests/support)


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
