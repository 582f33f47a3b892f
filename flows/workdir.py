"""Keeping the work folder bounded: after a successful run, drop what no current shard uses.

Shard folders are named by their cache key, and so are Prefect's persisted results, so anything
not named by one of this run's keys belongs to an input, config or code version that is gone.
(Two sets sharing one work folder would prune each other's cache: give each its own.)
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

_KEY_FILE = re.compile(r"^[0-9a-f]{64}$")


def prune(shards_dir: Path, results_dir: Path, keep_dirs: set[str], keep_keys: set[str]) -> int:
    """Remove shard folders not in ``keep_dirs`` and result files not in ``keep_keys``."""
    removed = 0
    if shards_dir.is_dir():
        for folder in shards_dir.iterdir():
            if folder.is_dir() and folder.name not in keep_dirs:
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
    if results_dir.is_dir():
        for path in results_dir.iterdir():
            if path.is_file() and _KEY_FILE.match(path.name) and path.name not in keep_keys:
                path.unlink(missing_ok=True)
                removed += 1
    return removed


def make_private(folder: Path, files: list[Path], stop_at: Path | None = None) -> None:
    """Raw-data files 0600 inside 0700 folders, whatever the umask: candidates, decisions,
    signatures and quarantine hold unredacted values. Folders from ``folder`` up to (and
    including) ``stop_at`` (default: ``folder``'s parent) are closed too."""
    folder = Path(folder)
    for path in files:
        if Path(path).exists():
            Path(path).chmod(0o600)
    stop = Path(stop_at) if stop_at is not None else folder.parent
    current = folder
    while True:
        if current.is_dir():
            current.chmod(0o700)
        if current == stop or current.parent == current:
            break
        current = current.parent
