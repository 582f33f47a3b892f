"""Shared fixtures for flow tests: one Prefect test API per session, with PREFECT_HOME in a
temporary folder (never the developer's ~/.prefect), and a demo pseudonym key."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

TEST_KEY = "flow-tests-pseudonym-key-0123456789abcdef0123456789"
#: The tiny generated corpus every flow test reads (tests copy it before changing it).
SESSIONS = 240
SHARDS = 3


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("prefect-home")
    previous = os.environ.get("PREFECT_HOME")
    os.environ["PREFECT_HOME"] = str(home)
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    try:
        with prefect_test_harness(server_startup_timeout=180):
            yield str(PREFECT_API_URL.value())
    finally:
        if previous is None:
            os.environ.pop("PREFECT_HOME", None)
        else:
            os.environ["PREFECT_HOME"] = previous


@pytest.fixture
def pseudonym_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", TEST_KEY)
    return TEST_KEY


@pytest.fixture
def events() -> Iterator[list[tuple[str, dict]]]:
    """Progress events of the flow runs inside the test."""
    from golden_distill.flows import progress

    seen: list[tuple[str, dict]] = []
    with progress.listening(lambda event, data: seen.append((event, dict(data)))):
        yield seen


def _shard_events(seen: list[tuple[str, dict]], kind: str = "shard_done") -> list[dict]:
    return [data for event, data in seen if event == kind]


@pytest.fixture
def shard_events():
    """``shard_events(events, kind="shard_done")``: progress events of one kind (shard_done,
    redact_done), each with done, total, selected, cached, shard."""
    return _shard_events


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    from golden_distill.synthetic import generate_corpus, load_truth

    out = tmp_path_factory.mktemp("corpus")
    generate_corpus(out, sessions=SESSIONS, seed=11, shards=SHARDS)
    return out, load_truth(out)


@pytest.fixture
def write_config():
    """``write_config(path, opt_out_tenant, **run)``: a test config (quotas off) at ``path``."""
    return _write_config


def _write_config(path: Path, opt_out: str, **run: object) -> Path:
    config = {
        "funnels": {"quotas": {"enabled": False}, "redacted": {"opt_out_tenants": [opt_out]}},
        "run": {"work_dir": str(path.parent / "work"), **run},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return path
