"""The built wheel installs and runs anywhere: no source tree, no repository beside it.

Builds the wheel from a copy of the tracked sources (PEP 517 backend, no network, with the
build warnings captured), installs it into a fresh virtualenv in a temporary folder, and runs
`golden config validate`, `golden generate`, `golden run` and the reader there, from an empty
working directory. The new venv sees the already installed dependencies through a path entry to
this venv's site-packages (offline and quick); `golden_distill` itself comes only from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
#: Top-level folders the wheel is built from (tests, benches and docs are not shipped).
NOT_SHIPPED = ("tests/", "bench/", "docs/", ".ci/")


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> str:
    import time

    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    print("TIMING", cmd[1:3], round(time.perf_counter() - t, 1))
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


def _fresh_venv(root: Path) -> Path:
    """A venv without pip whose path also reaches this venv's installed dependencies."""
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # A plain path line: that folder's own .pth files (our editable install) are not run.
    (Path(site) / "outer_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_wheel_installs_and_runs_outside_the_repository(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    src, dist, work = tmp_path / "src", tmp_path / "dist", tmp_path / "work"
    for folder in (src, dist, work):
        folder.mkdir()
    _copy_sources(src)
    wheel, build_log = _build_wheel(src, dist, env)
    assert "warning" not in build_log.lower(), build_log[-3000:]

    python = _fresh_venv(tmp_path / "venv")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        cwd=work,
        env=env,
    )
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
