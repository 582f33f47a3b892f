"""Package discovery for the mapped layout (metadata lives in pyproject.toml).

The code folders sit at the top level (`flows/`, `filters/`, `redaction/`, `datasets/`, and the
sample-data generator `synthetic/`) but are installed as `golden_distill.<folder>`; setuptools'
automatic discovery cannot express that, so we list every folder below them that holds Python
code. `datasets/` deliberately has no top-level `__init__.py` (see docs/architecture.md), so
discovery goes by `*.py` files, not `__init__.py`.

`configs/` holds no code: it ships as data (`golden_distill.configs`, every folder below it that
holds a YAML file) and the code finds it with `importlib.resources` (datasets/package_data.py).
"""

from pathlib import Path

from setuptools import setup

ROOT = "golden_distill"
#: Folders installed as `golden_distill.<folder>`, with the files that make a folder a package.
FOLDERS = {
    "flows": "*.py",
    "filters": "*.py",
    "redaction": "*.py",
    "datasets": "*.py",
    "synthetic": "*.py",
    "configs": "*.yaml",
}


def _packages() -> list[str]:
    found = []
    for folder, pattern in FOLDERS.items():
        for path in sorted([Path(folder), *Path(folder).rglob("*")]):
            if path.is_dir() and "__pycache__" not in path.parts and any(path.glob(pattern)):
                found.append(".".join([ROOT, *path.parts]))
    return found


setup(packages=_packages())
