"""The configs that ship with the package (``configs/`` in the repository, installed as data).

``configs/`` stays a top-level folder a person edits, and is installed as the data-only package
``golden_distill.configs`` (see setup.py). Code finds it through ``importlib.resources``, never
through a path relative to the source tree, so a wheel installed anywhere reads the same files as
an editable checkout.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path, PurePosixPath

CONFIGS_PACKAGE = "golden_distill.configs"
#: How configs name the shipped folder in paths a person writes (``configs/tools/x.yaml``).
CONFIGS_PREFIX = "configs"


def shipped_config(relative: str) -> Path:
    """The installed file ``configs/<relative>`` (e.g. ``nightly.yaml``, ``tools/tau-bench.yaml``).

    Wheels install unzipped, so the resource is a real file; its path is returned so error
    messages and ``golden config validate`` can name it.
    """
    node = resources.files(CONFIGS_PACKAGE)
    for part in PurePosixPath(relative).parts:
        node = node.joinpath(part)
    return Path(str(node))


def shipped_config_for(path: str | Path) -> Path | None:
    """``configs/...`` written relative to the repository -> the installed file, if it exists."""
    parts = PurePosixPath(Path(path).as_posix()).parts
    if len(parts) < 2 or parts[0] != CONFIGS_PREFIX:
        return None
    candidate = shipped_config("/".join(parts[1:]))
    return candidate if candidate.is_file() else None
