"""Parallel ingest: the inputs cut into work units, each read by its own worker process.

The native reader is pure Python per record, so one process reads one core's worth. With
``ingest(..., jobs=N)`` the planned inputs become *units*:

* a whole file, for compressed inputs (a gzip/zstd stream cannot be entered mid-way) and for the
  other formats (chat, evidence, OTel group records across the whole input);
* a byte range of a large uncompressed native JSONL file (``byte_ranges``: boundaries moved to
  line starts, so each line is read by exactly one unit).

Each unit runs in a ``spawn`` worker (not ``fork``: polars/pyarrow start threads a forked child
would inherit mid-state) and writes its own shards ``cases/part-<unit>-NNNNN.parquet`` (names sort
in reading order) and its own quarantine part, which the parent appends to ``quarantine.jsonl``
in unit order. A range worker numbers lines as the whole file does: the parent first counts the
newlines of every range (in the pool, one ``bytes.count`` pass over each), and the worker shifts
the line numbers of its quarantine entries and of ``source.position`` by the lines before it.
The result (cases, positions, quarantine entries, counts) is the single-process one; only the
shard file names differ. Memory per worker is the single reader's (same batches, same shards).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import time
from collections import Counter
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import fsspec
import pyarrow as pa
import pyarrow.compute as pc

from golden_distill.datasets.ingest_output import (
    CASES_DIR,
    QUARANTINE_FILE,
    IngestSummary,
    Progress,
    SourceSummary,
    read_into,
    streak_message,
)
from golden_distill.datasets.quarantine import Quarantine, QuarantineEntry, QuarantineStreak
from golden_distill.datasets.shards import ShardWriter
from golden_distill.datasets.sources.base import ReadStats, SourceError
from golden_distill.datasets.sources.byte_ranges import (
    RangeReader,
    count_newlines,
    even_offsets,
    file_size,
    line_ranges,
)
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.discovery import format_hint
from golden_distill.datasets.sources.lines import compression_of
from golden_distill.datasets.sources.registry import ADAPTERS
from golden_distill.datasets.sources.uris import display_uri, is_file_url

#: A plain native file smaller than this is one unit (splitting costs more than it gains).
MIN_RANGE_BYTES = 16 * 1024 * 1024
#: Ranges are at most about this large, so a big file gives every worker several (progress).
MAX_RANGE_BYTES = 256 * 1024 * 1024
QUARANTINE_PART = "quarantine.part-{index:05d}.jsonl"
QUARANTINE_PART_GLOB = "quarantine.part-*.jsonl"


class Planned(NamedTuple):
    """One input as ``ingest.plan`` yields it."""

    uri: str
    format: str | None
    error: str | None
    name: str = ""  # the file's name inside its source (``sources/identity.py``)


def resolve_jobs(jobs: int) -> int:
    """``jobs`` itself, or the usable cores for ``0``."""
    if jobs < 0:
        raise ValueError(f"jobs must be >= 0 (0: one per core), not {jobs}")
    if jobs == 0:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return os.cpu_count() or 1
    return jobs


@dataclass(frozen=True)
class Unit:
    """One piece of work: a whole input, or the byte range ``[start, end)`` of a plain file."""

    index: int
    source: int  # index of the planned input it belongs to
    uri: str
    fmt: str
    start: int | None = None
    end: int | None = None
    first_line: int = 1  # the file's line number of the range's first line
    name: str = ""  # the file's name inside its source (position-based case ids)

    @property
    def is_range(self) -> bool:
        return self.start is not None


@dataclass
class UnitResult:
    """What a unit's worker read and wrote (small: it travels back to the parent)."""

    index: int
    records_read: int = 0
    cases: int = 0
    rows_written: int = 0
    bytes_read: int = 0
    quarantined: dict[str, int] = field(default_factory=dict)
    shards: list[str] = field(default_factory=list)
    started: float = 0.0  # wall clock (time.time), comparable across processes
    finished: float = 0.0
    error: str | None = None


def _range_count(size: int, jobs: int, min_bytes: int, max_bytes: int) -> int:
    """How many ranges a ``size``-byte file is cut into: a multiple of ``jobs``, balanced."""
    per_worker = -(-size // (jobs * max_bytes))  # ceil
    return max(1, min(jobs * per_worker, size // max(min_bytes, 1)))


def _splittable(uri: str, fmt: str | None) -> bool:
    return (
        fmt == "native"
        and compression_of(uri) is None
        and is_file_url(uri)
        and not _in_process_only(uri)
    )


def _in_process_only(uri: str) -> bool:
    """Inputs another process cannot see (fsspec's in-memory filesystem): read in the parent."""
    return uri.lower().startswith("memory://")


def plan_units(
    planned: list[Planned],
    jobs: int,
    *,
    min_range_bytes: int | None = None,
    max_range_bytes: int | None = None,
) -> list[Unit]:
    """The units of ``planned`` in reading order (``first_line`` still 1: see ``_number_lines``)."""
    min_range_bytes = MIN_RANGE_BYTES if min_range_bytes is None else min_range_bytes
    max_range_bytes = MAX_RANGE_BYTES if max_range_bytes is None else max_range_bytes
    units: list[Unit] = []
    for source, (uri, fmt, error, name) in enumerate(planned):
        if error is not None or fmt is None:
            continue
        ranges: list[tuple[int, int]] = []
        if _splittable(uri, fmt):
            try:
                size = file_size(uri)
                parts = _range_count(size, jobs, min_range_bytes, max_range_bytes)
                if parts > 1:
                    with fsspec.open(uri, "rb") as fh:
                        ranges = line_ranges(fh, size, even_offsets(size, parts))
            except (OSError, ValueError):
                ranges = []  # the worker reads it whole and reports what is wrong with it
        if len(ranges) > 1:
            for start, end in ranges:
                units.append(Unit(len(units), source, uri, fmt, start, end, name=name))
        else:
            units.append(Unit(len(units), source, uri, fmt, name=name))
    return units


def _number_lines(pool: Executor, units: list[Unit]) -> list[Unit]:
    """``units`` with each range's ``first_line``, from the line counts of the ranges before it.

    The counts run in ``pool`` (one pass over each range but a file's last), all at once.
    """
    counts: dict[int, Future[int]] = {}
    for unit, after in zip(units, [*units[1:], None], strict=True):
        if after is not None and after.is_range and after.start and after.source == unit.source:
            counts[unit.index] = pool.submit(count_newlines, unit.uri, unit.start, unit.end)
    numbered: list[Unit] = []
    for unit in units:
        first_line = 1
        if unit.is_range and unit.start:  # not a file's first range: follows one of its own
            previous = numbered[-1]
            first_line = previous.first_line + counts[previous.index].result()
        numbered.append(
            Unit(unit.index, unit.source, unit.uri, unit.fmt, unit.start, unit.end, first_line)
        )
    return numbered


@dataclass
class _ShiftedQuarantine(Quarantine):
    """A quarantine that adds ``line_offset`` to every entry's line (a range's lines before it)."""

    line_offset: int = 0

    def add(self, entry: QuarantineEntry) -> None:
        if self.line_offset and entry.position is not None:
            entry.position += self.line_offset
        super().add(entry)


def shift_positions(batch: pa.RecordBatch, offset: int) -> pa.RecordBatch:
    """``batch`` with ``offset`` added to ``source.position`` (range-relative -> file lines)."""
    index = batch.schema.get_field_index("source")
    source = batch.column(index)
    children = source.flatten()
    at = source.type.get_field_index("position")
    children[at] = pc.add(children[at], pa.scalar(offset, children[at].type))
    mask = source.is_null() if source.null_count else None
    shifted = pa.StructArray.from_arrays(children, fields=list(source.type), mask=mask)
    columns = [shifted if i == index else c for i, c in enumerate(batch.columns)]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _read_range(
    unit: Unit, config: IngestConfig, writer: ShardWriter, quarantine: Quarantine, stats: ReadStats
) -> None:
    """Stream the unit's byte range through the native reader, lines numbered as in the file."""
    adapter = ADAPTERS[unit.fmt](config)  # type: ignore[call-arg]
    assert unit.start is not None and unit.end is not None
    try:
        raw = fsspec.open(unit.uri, "rb").open()
    except FileNotFoundError:
        raise SourceError(f"{display_uri(unit.uri)}: no such file") from None
    except (OSError, ValueError) as exc:
        raise SourceError(f"{display_uri(unit.uri)}: cannot open ({type(exc).__name__})") from None
    offset = unit.first_line - 1
    gc.disable()  # as NativeAdapter.read_batches does: buffered cases hold no cycles
    try:
        with raw:
            raw.seek(unit.start)
            view = RangeReader(raw, unit.end - unit.start)
            # the reader's line loop over any binary stream (read_batches opens the whole file)
            for batch in adapter._batches(unit.uri, view, quarantine, stats):  # type: ignore[attr-defined]
                writer.write_batch(shift_positions(batch, offset) if offset else batch)
            stats.bytes_read += view.tell()
    finally:
        gc.enable()


def run_unit(unit: Unit, out_dir: Path, config: IngestConfig) -> UnitResult:
    """Read one unit into its own shards and quarantine part (runs in a worker process)."""
    result = UnitResult(unit.index, started=time.time())
    writer = ShardWriter(
        out_dir / CASES_DIR,
        f"part-{unit.index:05d}",
        batch_rows=config.batch_rows,
        rows_per_shard=config.rows_per_shard,
    )
    quarantine = _ShiftedQuarantine(
        out_dir / QUARANTINE_PART.format(index=unit.index),
        raw_bytes=config.quarantine_raw_bytes,
        max_entries=config.quarantine_max_entries,
        max_consecutive=config.max_consecutive_quarantined,
        line_offset=unit.first_line - 1,
    )
    stats = ReadStats()
    with quarantine, writer:
        try:
            if unit.is_range:
                _read_range(unit, config, writer, quarantine, stats)
            else:
                adapter = ADAPTERS[unit.fmt](config)  # type: ignore[call-arg]
                read_into(adapter, unit.uri, writer, quarantine, stats, lambda: None, unit.name)
        except SourceError as exc:
            result.error = str(exc)
        except QuarantineStreak as exc:
            result.error = streak_message(unit.uri, unit.fmt, exc)
    result.records_read, result.cases, result.bytes_read = (
        stats.records_read,
        stats.cases,
        stats.bytes_read,
    )
    result.quarantined = dict(quarantine.counts)
    result.shards = [p.name for p in writer.paths]
    result.rows_written = writer.rows_written
    result.finished = time.time()
    return result


def _done(value: UnitResult) -> Future[UnitResult]:
    future: Future[UnitResult] = Future()
    future.set_result(value)
    return future


def run_units(
    units: list[Unit],
    out_dir: Path,
    config: IngestConfig,
    jobs: int,
    progress: Progress | None = None,
) -> list[UnitResult]:
    """Every unit's result, in unit order; ``progress(records, bytes)`` as units finish."""
    in_workers = [u for u in units if not _in_process_only(u.uri)]
    results: dict[int, UnitResult] = {}
    context = multiprocessing.get_context("spawn")
    workers = max(1, min(jobs, len(in_workers)))
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    try:
        units = _number_lines(pool, units)
        futures = [
            _done(run_unit(u, out_dir, config))
            if _in_process_only(u.uri)
            else pool.submit(run_unit, u, out_dir, config)
            for u in units
        ]
        records = read = 0
        for future in futures:  # unit order: results are small, waiting in order is fine
            result = future.result()
            results[result.index] = result
            records += result.records_read
            read += result.bytes_read
            if progress is not None:
                progress(records, read)
    except BrokenProcessPool as exc:
        pool.shutdown(wait=False, cancel_futures=True)
        raise RuntimeError("an ingest worker process died (out of memory?)") from exc
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return [results[u.index] for u in units]


def merge_quarantine(out_dir: Path, results: list[UnitResult], target: Path) -> Counter[str]:
    """Append the units' quarantine parts to ``target`` in unit order; the merged counts."""
    counts: Counter[str] = Counter()
    with target.open("wb") as out:
        for result in results:
            counts.update(result.quarantined)
            part = out_dir / QUARANTINE_PART.format(index=result.index)
            if part.exists():
                with part.open("rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 20)
                part.unlink()
    return counts


def ingest_in_processes(
    planned: list[Planned],
    out_dir: Path,
    config: IngestConfig,
    jobs: int,
    progress: Progress | None = None,
) -> IngestSummary | None:
    """The summary of reading ``planned`` with ``jobs`` processes; ``None`` when it is one unit.

    ``out_dir`` is prepared (empty of old output); the caller writes ``summary.json``.
    """
    units = plan_units(planned, jobs)
    if len(units) <= 1:
        return None  # nothing to share out: the single-process path, without worker start-up
    results = run_units(units, out_dir, config, jobs, progress)
    summary = IngestSummary(out_dir=out_dir)
    summary.quarantined = dict(merge_quarantine(out_dir, results, out_dir / QUARANTINE_FILE))
    by_source: dict[int, list[UnitResult]] = {}
    for unit, result in zip(units, results, strict=True):
        by_source.setdefault(unit.source, []).append(result)
    for source, (uri, fmt, error, _) in enumerate(planned):
        item = SourceSummary(uri=display_uri(uri), format=fmt, error=error)
        parts = by_source.get(source, [])
        for result in parts:
            item.records_read += result.records_read
            item.cases += result.cases
            item.bytes_read += result.bytes_read
            for reason, count in result.quarantined.items():
                item.quarantined[reason] = item.quarantined.get(reason, 0) + count
            if item.error is None:
                item.error = result.error
        if parts:
            item.seconds = max(r.finished for r in parts) - min(r.started for r in parts)
        if item.error is None and parts and not item.cases:
            item.hint = format_hint(uri, fmt) or None
        summary.sources.append(item)
        summary.records_read += item.records_read
        summary.bytes_read += item.bytes_read
    cases_dir = out_dir / CASES_DIR
    summary.shards = [cases_dir / name for result in results for name in result.shards]
    summary.cases_written = sum(result.rows_written for result in results)
    return summary
