"""The reader side installs and works without the pipeline: `pip install golden-distill[reader]`.

Each check runs in a subprocess where every module of the `pipeline` extra (Prefect, Presidio,
polars, scikit-learn, ...) is refused on import (block_pipeline.py), as on a machine with only
the base install.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from golden_distill.datasets.store.publish import publish_version
from golden_distill.flows.cli import PIPELINE_ONLY_MODULES

HERE = Path(__file__).resolve().parent
BLOCKER = HERE / "block_pipeline.py"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


factory = _load("golden_packaging_factory", HERE.parent / "datasets" / "store" / "factory.py")
extra = _load("golden_packaging_extra", HERE / "pipeline_extra.py")


def _blocked(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BLOCKER), *args],
        cwd=cwd,
        env={**os.environ, "GOLDEN_PSEUDONYM_KEY": "k" * 64},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_blocker_and_cli_know_every_module_of_the_pipeline_extra():
    modules = extra.pipeline_modules()
    assert {"prefect", "presidio_analyzer", "polars", "sklearn"} <= modules
    assert modules == PIPELINE_ONLY_MODULES


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    publish_version(str(root), "replay", cases=factory.make_table(6))
    return root


def test_reader_reads_and_replays_without_the_pipeline(store: Path, tmp_path: Path):
    code = (
        "import sys\n"
        "from golden_distill.datasets.reader import open_set\n"
        f"golden = open_set({str(store)!r}, 'replay@latest')\n"
        "case = next(iter(golden.cases()))\n"
        "step = case.case.steps[0]\n"
        "print(len(golden), case.lookup(step.name, 1).response == step.response)\n"
        "print(sorted(m for m in ('prefect', 'presidio_analyzer', 'polars', 'sklearn')"
        " if m in sys.modules))\n"
    )
    out = _blocked("-c", code, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == ["6 True", "[]"]


def test_golden_sets_works_and_pipeline_commands_say_what_to_install(store: Path, tmp_path: Path):
    listed = _blocked(
        "-m", "golden_distill.flows.cli", "sets", "list", "--store", str(store), cwd=tmp_path
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "replay" in listed.stdout

    run = _blocked(
        "-m",
        "golden_distill.flows.cli",
        "run",
        "--source",
        str(tmp_path),
        "--store",
        str(store),
        "--set",
        "nightly",
        cwd=tmp_path,
    )
    assert run.returncode == 1
    assert "pip install 'golden-distill[pipeline]'" in run.stderr
    assert "Traceback" not in run.stderr
