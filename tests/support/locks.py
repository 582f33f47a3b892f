"""The two dependency locks, derived from pyproject.toml and the installed distributions.

* ``requirements.lock``: what the wheel needs at run time, ``golden-distill[pipeline]`` and
  everything it pulls in (a `pip install -r requirements.lock golden_distill-*.whl` runs the
  pipeline); no test runner, linter or test server.
* ``requirements-dev.lock``: what tests, lint and building need on top (the `test` extra:
  pytest, ruff, moto's S3 server, Playwright, import-linter...; setuptools for the build).

Each lock is the closure of its roots over the installed distributions' own requirements
(markers evaluated for this interpreter), pinned to the installed versions; the dev lock leaves
out what the runtime lock already pins. ``python tests/support/locks.py`` rewrites both files
(`make lock`); tests/packaging/test_locks.py checks that they are still what this gives.
"""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
RUNTIME_LOCK = REPO / "requirements.lock"
DEV_LOCK = REPO / "requirements-dev.lock"
#: Building the wheel and the editable install (`pip install --no-build-isolation -e .`).
BUILD_ROOTS = ("setuptools", "wheel")


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def runtime_roots() -> list[str]:
    project = _project()
    return [*project["dependencies"], *project["optional-dependencies"]["pipeline"]]


def dev_roots() -> list[str]:
    return [*_project()["optional-dependencies"]["test"], *BUILD_ROOTS]


def closure(roots: list[str]) -> dict[str, str]:
    """``{distribution name: installed version}`` of ``roots`` and all they require."""
    found: dict[str, str] = {}
    todo = [Requirement(r) for r in roots]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req = todo.pop()
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            raise SystemExit(f"{req.name} is required but not installed") from None
        found[dist.metadata["Name"]] = dist.version
        for text in dist.requires or []:
            sub = Requirement(text)
            wanted = ["", *sorted(req.extras)]
            if sub.marker and not any(sub.marker.evaluate({"extra": e}) for e in wanted):
                continue
            todo.append(sub)
    return found


def _pins(found: dict[str, str]) -> str:
    return "".join(f"{name}=={found[name]}\n" for name in sorted(found, key=str.lower))


HEADERS = {
    RUNTIME_LOCK: "# Runtime lock: golden-distill[pipeline] and what it pulls in (tests/support/"
    "locks.py, `make lock`).\n",
    DEV_LOCK: "# Development lock, on top of requirements.lock: tests, lint, test servers and "
    "building (tests/support/locks.py, `make lock`).\n",
}


def expected() -> dict[Path, str]:
    """Each lock file's content for the installed distributions."""
    runtime = closure(runtime_roots())
    runtime.pop("golden-distill", None)
    names = {canonicalize_name(n) for n in runtime}
    dev = {
        name: version
        for name, version in closure(dev_roots()).items()
        if canonicalize_name(name) not in names and canonicalize_name(name) != "golden-distill"
    }
    return {
        RUNTIME_LOCK: HEADERS[RUNTIME_LOCK] + _pins(runtime),
        DEV_LOCK: HEADERS[DEV_LOCK] + _pins(dev),
    }


def main() -> int:
    for path, text in expected().items():
        path.write_text(text)
        print(f"{path.name}: {text.count('==')} pins")
    return 0


if __name__ == "__main__":
    sys.exit(main())
