"""Keeping the work folder bounded: after a successful run, drop what no current shard uses.

Shard folders are named by their cache key, and so are Prefect's persisted results, so anything
not named by one of this run's keys belongs to an input, config or code version that is gone.
(Each set has its own work folder, flows/params.set_folders, held by one run at a time.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golden_distill.flows.work_folder import WorkFolder

_KEY_FILE = re.compile(r"^[0-9a-f]{64}$")


def prune(
    shards_dir: Path | str,
    results_dir: Path | str,
    keep_dirs: set[str],
    keep_keys: set[str],
    work: WorkFolder | None = None,
) -> int:
    """Remove shard folders not in ``keep_dirs`` and result files not in ``keep_keys``, in
    ``work`` (a local or fsspec work folder; default: the local folder holding ``shards_dir``)."""
    if work is None:
        from golden_distill.flows.work_folder import WorkFolder  # (it imports this module)

        work = WorkFolder(Path(shards_dir).parent)
    shards, results = str(shards_dir), str(results_dir)
    removed = 0
    for name in work.list_names(shards):
        if name not in keep_dirs:
            work.remove_tree(f"{shards}/{name}")
            removed += 1
    for name in work.list_names(results):
        if _KEY_FILE.match(name) and name not in keep_keys:
            work.remove_file(f"{results}/{name}")
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
