"""The dependency locks: a runtime lock the wheel runs from (no test runner, linter or test
server in it), a development lock on top, both what pyproject.toml and the installed versions
give (tests/support/locks.py), one Prefect version everywhere, the Python versions declared."""

from __future__ import annotations

import tomllib

import prefect
import yaml
from locks import DEV_LOCK, REPO, RUNTIME_LOCK, expected
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

#: Development-only distributions: never in what a wheel user installs.
DEV_ONLY = ("pytest", "pytest-xdist", "ruff", "moto", "cfn-lint", "sympy", "flask", "werkzeug")


def _pins(path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_the_locks_are_what_pyproject_and_the_installed_versions_give():
    for path, text in expected().items():
        assert path.read_text() == text, f"{path.name} is stale: run `make lock`"


def test_the_runtime_lock_carries_no_test_runner_linter_or_test_server():
    runtime, dev = _pins(RUNTIME_LOCK), _pins(DEV_LOCK)
    assert not set(runtime) & set(dev)  # each pin in one lock
    assert not [name for name in DEV_ONLY if name in runtime]
    assert {"moto", "pytest", "ruff", "playwright", "import-linter"} <= set(dev)
    assert {"prefect", "presidio-analyzer", "polars", "prefect-dask"} <= set(runtime)


def test_one_prefect_version_everywhere():
    pinned = _pins(RUNTIME_LOCK)["prefect"]
    deployment = yaml.safe_load((REPO / "prefect.yaml").read_text())["prefect-version"]
    assert str(deployment) == pinned == prefect.__version__
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (declared,) = [d for d in project["optional-dependencies"]["pipeline"] if "prefect>" in d]
    assert pinned in SpecifierSet(declared.removeprefix("prefect"))


def test_supported_python_versions_are_declared_and_run_in_ci():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    supported = SpecifierSet(project["requires-python"])
    tested = ("3.11", "3.12")
    for version in tested:
        assert version in supported
        assert f"Programming Language :: Python :: {version}" in project["classifiers"]
    # CI (.ci/run -> make test -> tests/run_tests.sh) hands a 3.12 to the wheel test
    runner = (REPO / "tests" / "run_tests.sh").read_text()
    assert "GOLDEN_WHEEL_PYTHON" in runner and "python3.12" in runner
