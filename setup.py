"""Package discovery for the mapped layout (metadata lives in pyproject.toml).

The code folders sit at the top level (`flows/`, `filters/`, `redaction/`, `datasets/`) but are
installed as `golden_distill.<folder>`; setuptools' automatic discovery cannot express that, so we
list every folder below them that holds Python code. `datasets/` deliberately has no top-level
`__init__.py` (see docs/architecture.md), so discovery goes by `*.py` files, not `__init__.py`.
"""

from pathlib import Path

from setuptools import setup

ROOT = "golden_distill"
FOLDERS = ("flows", "filters", "redaction", "datasets")


def _packages() -> list[str]:
    found = []
    for folder in FOLDERS:
        for path in sorted([Path(folder), *Path(folder).rglob("*")]):
            if path.is_dir() and "__pycache__" not in path.parts and any(path.glob("*.py")):
                found.append(".".join([ROOT, *path.parts]))
    return found


setup(packages=_packages())
