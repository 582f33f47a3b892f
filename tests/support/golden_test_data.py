"""The real tau-bench runs vendored under ``tests/data/tau-bench`` (see its README), for any test.

They ship gzip-compressed to keep the repository small; each is decompressed once per test
process into a private temporary folder, so tests read a plain ``.json`` array exactly as a user's
export would look. ``tests/support`` is on ``sys.path`` through pytest's ``pythonpath`` setting.
"""

from __future__ import annotations

import atexit
import gzip
import json
import shutil
import tempfile
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "tau-bench"

#: Run files by short name (the vendored file is ``<name>.json.gz``).
RUN_FILES = ("airline-gpt-4o", "retail-tool-calling", "retail-with-preconditions")


@cache
def _scratch() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="golden-tau-bench-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@cache
def tau_bench_file(name: str) -> Path:
    """A plain-JSON copy of the vendored file ``name`` (e.g. ``airline-gpt-4o``)."""
    source = DATA / f"{name}.json.gz"
    if not source.is_file():
        raise FileNotFoundError(f"no vendored tau-bench file {source}")
    target = _scratch() / f"{name}.json"
    target.write_bytes(gzip.decompress(source.read_bytes()))
    return target


def airline_runs_path() -> Path:
    """The 200 gpt-4o airline runs."""
    return tau_bench_file("airline-gpt-4o")


def retail_runs_paths() -> list[Path]:
    """The two 100-run retail files (standard agent, then the with-preconditions variant)."""
    return [tau_bench_file("retail-tool-calling"), tau_bench_file("retail-with-preconditions")]


def all_runs_paths() -> list[Path]:
    """All 400 runs: airline first, then retail."""
    return [airline_runs_path(), *retail_runs_paths()]


@cache
def tau_bench_users(environment: str) -> dict[str, dict]:
    """The users table of ``airline`` or ``retail`` (only the users the runs belong to)."""
    return json.loads(gzip.decompress((DATA / f"users-{environment}.json.gz").read_bytes()))
