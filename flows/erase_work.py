"""What an erased subject leaves in a work folder, and removing it (`golden erase --work`).

The work folder keeps raw data for cached reruns (candidates before redaction, quarantine files
with raw source lines, error details), so erasing a subject from the store leaves its raw
values there until the folder is pruned. This finds the files that still hold one of the
subject's values (Parquet: every string of every row; other files: their bytes, case-folded)
and groups them into units: a shard or selection folder, or a top-level file, the same units
`golden work prune` removes. Local work folders only (a URL one is expired by the bucket's
lifecycle rule, docs/operating.md).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from golden_distill.datasets.store.erasure_log import all_strings
from golden_distill.flows.work_retention import UNIT_FOLDERS


@dataclass(slots=True)
class WorkFindings:
    folder: Path
    units: dict[Path, list[Path]] = field(default_factory=dict)  # unit -> files holding it
    unreadable: list[Path] = field(default_factory=list)

    @property
    def files(self) -> int:
        return sum(len(v) for v in self.units.values())


def _parquet_holds(path: Path, needles: list[str]) -> bool:
    file = pq.ParquetFile(path)
    for batch in file.iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            for text in all_strings(row):
                folded = text.casefold()
                if any(n in folded for n in needles):
                    return True
    return False


def _bytes_hold(path: Path, needles: list[bytes]) -> bool:
    data = path.read_bytes().lower()
    return any(n in data for n in needles)


def _unit_of(path: Path, root: Path) -> Path:
    parts = path.relative_to(root).parts
    if len(parts) >= 2 and parts[0] in UNIT_FOLDERS:
        return root / parts[0] / parts[1]
    return path


def find_subject(folder: Path, values: list[str]) -> WorkFindings:
    """Files under ``folder`` (a set's work folder) that hold any of ``values``."""
    found = WorkFindings(folder)
    needles = [" ".join(v.split()).casefold() for v in values if v.strip()]
    raw = [n.encode() for n in needles]
    if not folder.is_dir() or not needles:
        return found
    for base, _dirs, files in os.walk(folder, followlinks=False):
        for name in files:
            path = Path(base) / name
            if path.is_symlink():
                continue
            try:
                holds = (
                    _parquet_holds(path, needles)
                    if name.endswith(".parquet")
                    else _bytes_hold(path, raw)
                )
            except Exception:
                found.unreadable.append(path)
                continue
            if holds:
                found.units.setdefault(_unit_of(path, folder), []).append(path)
    return found


def remove_units(found: WorkFindings) -> int:
    """Remove every unit holding the subject (a cached rerun recomputes it from the sources,
    where the erasure log keeps the subject out of the store)."""
    for unit in found.units:
        if unit.is_dir() and not unit.is_symlink():
            shutil.rmtree(unit, ignore_errors=True)
        else:
            unit.unlink(missing_ok=True)
    return len(found.units)
