"""Retention for the work folder: it holds raw data (candidates before redaction, quarantine
files with raw source lines, withheld error details), so nothing may stay there forever.

``prune_older_than`` removes every unit of the work folder whose newest file is older than the
cutoff: a shard folder (candidates, quarantine, redacted parts), a Prefect result file, a
leftover publish folder, a top-level file such as ``errors.log``. A unit with any recent file is
kept whole, so a running or recent run never loses half its shard. Each set's own work folder
(``sets/<set>/``) is pruned the same way. ``fingerprints.json`` (sizes,
times and hashes of inputs; no content) is kept. Symlinks are removed, never followed.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

#: The folder holding one work folder per set (``flows/params.set_folders``).
SETS_FOLDER = "sets"
#: Folders whose children are pruned one by one (each child is one unit).
UNIT_FOLDERS = ("shards", "publish", "prefect-results")
KEEP_FILES = frozenset({"fingerprints.json"})
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    """``7d``, ``12h``, ``30m``, ``2w``, ``90s`` -> a timedelta (ValueError otherwise)."""
    match = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"not a duration: {text!r} (a number and one of s, m, h, d, w: 7d)")
    return timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})


@dataclass(slots=True)
class PruneReport:
    removed: list[Path] = field(default_factory=list)
    kept: int = 0
    bytes_removed: int = 0


def _newest(path: Path) -> tuple[float, int]:
    """(newest mtime, total bytes) of a file or folder tree, not following symlinks."""
    info = path.lstat()
    if not path.is_dir() or path.is_symlink():
        return info.st_mtime, info.st_size
    newest, size = None, 0  # files only: a folder's own time changes whenever a child is added
    for root, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            stat = os.lstat(os.path.join(root, name))
            newest = stat.st_mtime if newest is None else max(newest, stat.st_mtime)
            size += stat.st_size
    return (info.st_mtime if newest is None else newest), size


def _units(work_dir: Path) -> list[Path]:
    units: list[Path] = []
    for child in sorted(work_dir.iterdir()):
        if child.name == SETS_FOLDER and child.is_dir() and not child.is_symlink():
            for folder in sorted(child.iterdir()):  # one work folder per set (flows/params.py)
                if folder.is_dir() and not folder.is_symlink():
                    units.extend(_units(folder))
        elif child.name in UNIT_FOLDERS and child.is_dir() and not child.is_symlink():
            units.extend(sorted(child.iterdir()))
        elif child.name not in KEEP_FILES and not child.is_dir():
            units.append(child)
    return units


def prune_older_than(
    work_dir: Path, older_than: timedelta, *, now: float, dry_run: bool = False
) -> PruneReport:
    """Remove (or with ``dry_run`` list) the work folder's units older than ``older_than``."""
    report = PruneReport()
    if not work_dir.is_dir():
        return report
    cutoff = now - older_than.total_seconds()
    for unit in _units(work_dir):
        newest, size = _newest(unit)
        if newest >= cutoff:
            report.kept += 1
            continue
        report.removed.append(unit)
        report.bytes_removed += size
        if dry_run:
            continue
        if unit.is_dir() and not unit.is_symlink():
            shutil.rmtree(unit, ignore_errors=True)
        else:
            unit.unlink(missing_ok=True)
    return report
