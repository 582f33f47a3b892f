"""The import layers (pyproject.toml, `[tool.importlinter]`): the code keeps them, and the
contracts really catch a break.

`make lint` runs `lint-imports`; here it runs on the repository (every contract kept), then on a
copy of the code folders with one import planted that breaks a layer, where it must fail and
name the broken contract. The copy is laid out as a regular `golden_distill` package in a
temporary folder, found first on the path, so the planted file is analysed instead of the
installed worktree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
FOLDERS = ("flows", "filters", "redaction", "datasets", "synthetic")


#: Runs lint-imports on the code under the working folder: the editable install's finder (which
#: maps `golden_distill.*` to the worktree) is taken out, so the copy's files are the ones found.
_ON_THE_COPY = """
import importlib.util, os, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path[:] = [os.getcwd()] + [p for p in sys.path if "__editable__" not in p]
found = importlib.util.find_spec("golden_distill.datasets").submodule_search_locations
assert all(p.startswith(os.getcwd()) for p in found), f"not the copy: {list(found)}"
from importlinter.cli import lint_imports_command
sys.argv = ["lint-imports", "--no-cache"]
sys.exit(lint_imports_command())
"""


def _lint(cwd: Path, on_copy: bool = True) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", _ON_THE_COPY] if on_copy else [str(LINT_IMPORTS), "--no-cache"]
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "300"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _contracts() -> list[dict]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_code_keeps_every_layer_contract():
    names = [c["name"] for c in _contracts()]
    assert len(names) >= 4
    out = _lint(REPO, on_copy=False)
    assert out.returncode == 0, out.stdout + out.stderr
    for name in names:
        assert "KEPT" in out.stdout and name.split(":")[0] in out.stdout
    assert f"Contracts: {len(names)} kept, 0 broken." in out.stdout


def test_make_lint_runs_the_contracts():
    lint_target = (REPO / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "lint-imports" in lint_target


@pytest.fixture(scope="module")
def code_copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("layers")
    package = root / "golden_distill"
    package.mkdir()  # a namespace package, as installed: grimp needs the roots' parent to be one
    for folder in FOLDERS:
        shutil.copytree(
            REPO / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    clean = _lint(root)
    assert clean.returncode == 0, clean.stdout + clean.stderr  # the copy itself is clean
    return root


# (where the planted module goes, what it imports, the contract that must report it)
PLANTED = [
    # the store reaching into redaction (as erasure once did for the pseudonym rules)
    ("datasets/store/planted.py", "golden_distill.redaction.pseudonym", "bottom layer"),
    # the replay kit reaching into filters (as the pytest plugin once did for the split names)
    ("datasets/replay/planted.py", "golden_distill.filters.curation_config", "bottom layer"),
    ("filters/planted.py", "golden_distill.redaction.keys", "flows wires the domain"),
    ("redaction/planted.py", "golden_distill.flows.params", "flows wires the domain"),
    ("synthetic/planted.py", "golden_distill.filters.quotas", "flows wires the domain"),
    ("datasets/store/planted.py", "golden_distill.datasets.replay.gate", "replay kit"),
    ("filters/planted.py", "prefect", "no Prefect"),
]


@pytest.mark.parametrize(("where", "imported", "contract"), PLANTED)
def test_a_planted_break_fails_the_lint(code_copy, where, imported, contract):
    planted = code_copy / "golden_distill" / where
    planted.write_text(f"import {imported}  # planted by the test\n")
    try:
        out = _lint(code_copy)
    finally:
        planted.unlink()
    assert out.returncode != 0, out.stdout
    broken = [line for line in out.stdout.splitlines() if " BROKEN" in line]
    assert any(contract in line for line in broken), out.stdout
    assert "planted" in out.stdout
