"""The built wheel installs from the runtime lock alone and runs anywhere: no source tree, no
repository beside it, no development package.

Builds the wheel from a copy of the tracked sources (PEP 517 backend, no network, with the
build warnings captured), creates a fresh virtualenv in a temporary folder with the Python of
``GOLDEN_WHEEL_PYTHON`` (tests/run_tests.sh sets a 3.12 there, the suite itself runs on 3.11;
default: this interpreter), installs ``-r requirements.lock`` and the wheel into it, and runs
`golden config init`, `golden config validate`, `golden generate`, `golden run` and the reader
from an empty working directory.

The lock's files come from the package index once per Python version and lock content, into a
wheelhouse under ``~/.cache/golden-distill/`` (``$XDG_CACHE_HOME``); later runs install from it
with ``--no-index`` (about 40 s instead of 100 s or more).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
#: Top-level folders the wheel is built from (tests, benches and docs are not shipped).
NOT_SHIPPED = ("tests/", "bench/", "docs/", ".ci/")
PYTHON = os.environ.get("GOLDEN_WHEEL_PYTHON") or sys.executable
LOCK = REPO / "requirements.lock"
#: Distributions of the development lock that must not reach a wheel user's environment.
DEV_ONLY = ("pytest", "moto", "ruff", "cfn-lint", "flask", "playwright", "import-linter")


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> str:
    started = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    print("took", cmd[1:3], round(time.perf_counter() - started, 1), "s")
    assert out.returncode == 0, f"{cmd[:3]} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


def _copy_sources(dest: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        if name.startswith(NOT_SHIPPED) or not (REPO / name).is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, dest / name)


def _build_wheel(src: Path, dist: Path, env: dict[str, str]) -> tuple[Path, str]:
    code = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    log = _run([sys.executable, "-c", code, str(dist)], cwd=src, env=env)
    (wheel,) = dist.glob("golden_distill-*.whl")
    return wheel, log


def _python_version(python: str) -> str:
    out = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def _wheelhouse(python: Path, env: dict[str, str], work: Path) -> Path:
    """The runtime lock's files for this Python, downloaded once per lock content."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "golden-distill"
    digest = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    house = cache / f"wheelhouse-py{_python_version(str(python))}-{digest}"
    if not (house / ".complete").exists():
        house.mkdir(parents=True, exist_ok=True)
        pip = [str(python), "-m", "pip", "download", "--quiet", "-r", str(LOCK), "-d", str(house)]
        _run(pip, cwd=work, env=env, timeout=900)
        (house / ".complete").touch()
    return house


def _fresh_venv(root: Path, env: dict[str, str], work: Path, wheel: Path) -> Path:
    """A venv of ``PYTHON`` with the runtime lock and the wheel: nothing else."""
    _run([PYTHON, "-m", "venv", str(root)], cwd=work, env=env)
    python = root / "bin" / "python"
    house = _wheelhouse(python, env, work)
    install = [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-compile"]
    install += ["--find-links", str(house), "-r", str(LOCK), str(wheel)]
    _run(install, cwd=work, env=env, timeout=900)
    return python


def test_wheel_installs_from_the_runtime_lock_alone_and_runs_outside_the_repository(
    tmp_path: Path,
):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("PYTHONPATH", None)
    src, dist, work = tmp_path / "src", tmp_path / "dist", tmp_path / "work"
    for folder in (src, dist, work):
        folder.mkdir()
    _copy_sources(src)
    wheel, build_log = _build_wheel(src, dist, env)
    assert "warning" not in build_log.lower(), build_log[-3000:]

    python = _fresh_venv(tmp_path / "venv", env, work, wheel)
    installed = _run([str(python), "-m", "pip", "list", "--format", "freeze"], work, env)
    names = {line.split("==")[0].lower() for line in installed.split()}
    assert "golden-distill" in names and "prefect" in names
    assert not [name for name in DEV_ONLY if name in names], "a development package installed"
    assert _python_version(str(python)) == _python_version(PYTHON)
    golden = str(tmp_path / "venv" / "bin" / "golden")
    env.update(
        GOLDEN_PSEUDONYM_KEY="wheel-test-key-9f3c2a71d8e04b6f95a1c7e2d4b8f60a3e5d7c9b1f2a4c6e",
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PYTHONPATH="",
    )

    where = _run(
        [
            str(python),
            "-c",
            "import golden_distill.flows.config as c, golden_distill.synthetic as s;"
            " print(c.DEFAULT_CONFIG_PATH); print(s.__file__)",
        ],
        cwd=work,
        env=env,
    ).split()
    installed = str(tmp_path / "venv")
    assert all(path.startswith(installed) for path in where), where  # not the source tree
    # a wheel user gets the packaged default to edit from `config init`, not from a checkout
    _run([golden, "config", "init", "nightly.yaml"], cwd=work, env=env)
    assert (work / "nightly.yaml").read_bytes() == Path(where[0]).read_bytes()
    assert "valid" in _run([golden, "config", "validate", "nightly.yaml"], cwd=work, env=env)
    _run(
        [
            golden,
            "generate",
            "--out",
            "recordings",
            "--sessions",
            "60",
            "--seed",
            "5",
            "--shards",
            "2",
        ],
        cwd=work,
        env=env,
    )
    ran = _run(
        [
            golden,
            "run",
            "--config",
            "nightly.yaml",
            "--source",
            "recordings",
            "--format",
            "native",
            "--store",
            "store",
            "--set",
            "nightly",
            "--work-dir",
            "run-work",
        ],
        cwd=work,
        env=env,
    )
    assert "published version:" in ran

    read = _run(
        [
            str(python),
            "-c",
            "from golden_distill.datasets.reader import open_set;"
            " g = open_set('store', 'nightly@latest'); c = next(iter(g.cases()));"
            " print(len(g), g.version, len(c.case.steps) > 0)",
        ],
        cwd=work,
        env=env,
    ).split()
    assert int(read[0]) > 0 and read[1] in ran and read[2] == "True"
