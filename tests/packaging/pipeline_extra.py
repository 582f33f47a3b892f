"""The `pipeline` extra of pyproject.toml, as the top-level modules it installs."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pipeline_distributions() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["pipeline"]
    return {_canonical(re.split(r"[\[<>=!~; ]", spec, maxsplit=1)[0]) for spec in extra}


def pipeline_modules() -> set[str]:
    """Top-level import names installed by the pipeline extra's own distributions."""
    wanted = pipeline_distributions()
    return {
        module
        for module, dists in packages_distributions().items()
        if any(_canonical(d) in wanted for d in dists) and not module.startswith("_")
    }
