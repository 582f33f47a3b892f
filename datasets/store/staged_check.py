"""The replay check over a version's staged case files, on two cores when the set is large.

Publishing verifies the bytes it staged before the version becomes visible: every case's
steps are read back and checked (``recorded_calls.check_table_except``). It is a pure
function of each case, most of publishing's time at a million sessions (~18 s of CPU for 145k
cases), and it runs when the redaction workers are gone, so a large set is checked on two
cores: this process takes whole row groups of the staged files from the front while one helper
process takes them from the back (datasets/front_and_back.py; ~0.23 GB for the helper at 2M
sessions, when publishing is the process tree's peak). The result is the same, in the same
order, as the one-process check (tests/datasets/store/test_staged_check.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.front_and_back import front_and_back, helper_would_help
from golden_distill.datasets.store.recorded_calls import ReplayCheckResult, check_table_except

if TYPE_CHECKING:  # polars only for a grown set's digests (the pipeline install)
    import polars as pl

#: Staged cases from which the check runs in two processes (below, starting them costs more
#: than it saves).
PARALLEL_FROM_ROWS = 40_000
#: Cases per unit of work handed to a process (whole row groups, about this many rows).
UNIT_ROWS = 8_192
#: Rows read at once inside a unit (a case never spans two batches: one row is one case).
BATCH_ROWS = 2_048


def _units(paths: Sequence[Path]) -> list[tuple[Path, list[int]]]:
    """(file, row groups) pieces of about ``UNIT_ROWS`` rows, in file and row group order."""
    units: list[tuple[Path, list[int]]] = []
    for path in paths:
        meta = pq.ParquetFile(path).metadata
        groups: list[int] = []
        rows = 0
        for index in range(meta.num_row_groups):
            groups.append(index)
            rows += meta.row_group(index).num_rows
            if rows >= UNIT_ROWS:
                units.append((path, groups))
                groups, rows = [], 0
        if groups:
            units.append((path, groups))
    return units


def _check_unit(
    unit: tuple[Path, list[int]],
    volatile: Iterable[str] | None,
    prechecked: pl.DataFrame | None,
) -> tuple[ReplayCheckResult, int]:
    path, groups = unit
    result = ReplayCheckResult()
    rows = 0
    for batch in pq.ParquetFile(path).iter_batches(BATCH_ROWS, row_groups=groups):
        table = pa.Table.from_batches([batch])
        rows += table.num_rows
        _add(result, check_table_except(table, volatile, prechecked))
    return result, rows


def _add(into: ReplayCheckResult, part: ReplayCheckResult) -> None:
    into.cases_prechecked += part.cases_prechecked
    into.cases_checked += part.cases_checked
    into.steps_checked += part.steps_checked
    into.failures.extend(part.failures)


def check_staged(
    paths: Sequence[Path],
    volatile: Iterable[str] | None,
    prechecked: pl.DataFrame | None = None,
    processes: int | None = None,
) -> tuple[ReplayCheckResult, int]:
    """The replay check of every case in ``paths`` and the number of rows read. ``processes``:
    how many check at once (2: this one and a helper); None = two when the files hold
    ``PARALLEL_FROM_ROWS`` cases or more and two cores exist."""
    volatile = list(volatile) if volatile is not None else None
    units = _units(paths)
    if processes is None:
        rows = sum(pq.ParquetFile(p).metadata.num_rows for p in paths)
        big = rows >= PARALLEL_FROM_ROWS and helper_would_help()
        processes = 2 if big else 1
    result = ReplayCheckResult()
    total = 0
    if processes <= 1 or len(units) < 2:
        parts = (_check_unit(unit, volatile, prechecked) for unit in units)
        for part, rows in parts:
            _add(result, part)
            total += rows
        return result, total
    parts = _shared_with_one_process(units, volatile, prechecked)
    for part, rows in parts:  # in unit order: the same failures list as one process
        _add(result, part)
        total += rows
    return result, total


def _shared_with_one_process(
    units: list[tuple[Path, list[int]]],
    volatile: list[str] | None,
    prechecked: pl.DataFrame | None,
) -> list[tuple[ReplayCheckResult, int]]:
    """Every unit's result, in unit order: this process checks units from the front while one
    helper process checks them from the back, until they meet (``front_and_back``)."""
    return [part for _, part in front_and_back(units, _check_unit, volatile, prechecked)]
