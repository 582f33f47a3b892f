"""Writing a version's case files with bounded memory: range buckets by case id, one at a time.

Publishing used to load and sort the whole set; at a few million cases that was most of the
machine. Instead:

1. read only the ``case_id`` column of every input part (a few tens of MB for millions of ids),
   check ids (none missing, none twice) and cut the sorted ids into ranges of about
   ``bucket_rows`` ids: the bucket boundaries;
2. stream every input part batch by batch, conform each batch to GOLDEN_SCHEMA and append its
   rows to the temporary file of their bucket (an Arrow IPC stream, LZ4-compressed: a bucket is
   written once and read once, so Parquet's encoding was spent for nothing; at a million
   sessions it took twice the CPU to write and three times to read);
3. for each bucket in id order: read it, sort it, and append it to the output files, cut at
   ``max_rows_per_file`` rows with row groups of ``row_group_rows``.

Peak memory is one bucket plus one input batch, whatever the size of the set; the output is the
same sorted files with the same row groups as sorting the whole set at once, so the same cases
always give the same bytes. Counts for the manifest are accumulated bucket by bucket.
"""

from __future__ import annotations

import bisect
import math
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from golden_distill.datasets.schema import GOLDEN_SCHEMA

#: Input rows read at a time while routing rows to buckets.
BATCH_ROWS = 2048
#: How bucket files are written: scratch, read back once by this process.
_BUCKET_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


class CaseIdError(ValueError):
    """Case ids missing or repeated across the inputs (names ids only)."""


def _ids(paths: Sequence[Path], exclude: frozenset[str]) -> pa.Array:
    arrays = [pq.read_table(p, columns=["case_id"]).column("case_id") for p in paths]
    ids = pa.chunked_array([c for a in arrays for c in a.chunks], pa.string())
    flat = ids.combine_chunks() if ids.num_chunks else pa.array([], pa.string())
    if exclude:
        flat = flat.filter(pc.invert(pc.is_in(flat, value_set=pa.array(sorted(exclude)))))
    return flat


def check_ids(ids: pa.Array) -> None:
    if ids.null_count:
        raise CaseIdError(f"{ids.null_count} case(s) without case_id")
    if len(ids) and pc.count_distinct(ids).as_py() != len(ids):
        counts = pc.value_counts(ids)
        dupes = [v["values"] for v in counts.to_pylist() if v["counts"] > 1][:5]
        raise CaseIdError(f"duplicate case_id(s): {', '.join(map(str, dupes))}")


def boundaries(ids: pa.Array, bucket_rows: int) -> list[str]:
    """The first id of every bucket but the first (sorted): ``bisect`` on them routes an id."""
    ordered = pc.sort_indices(ids)
    every = list(range(bucket_rows, len(ids), bucket_rows))
    if not every:
        return []
    return ids.take(ordered.take(pa.array(every))).to_pylist()


@dataclass
class CaseCounts:
    """The manifest's `counts` of the written cases, accumulated bucket by bucket."""

    cases: int = 0
    steps: int = 0
    tenants: set[str] = field(default_factory=set)
    per_funnel: Counter[str] = field(default_factory=Counter)

    def add(self, table: pa.Table) -> None:
        self.cases += table.num_rows
        self.steps += int(pc.sum(pc.list_value_length(table.column("steps"))).as_py() or 0)
        unique = pc.unique(table.column("tenant_id")).to_pylist()
        self.tenants.update(t for t in unique if t is not None)
        flat = pc.list_flatten(table.column("funnels"))
        for row in pc.value_counts(flat).to_pylist():
            if row["values"]:
                self.per_funnel[row["values"]] += row["counts"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "steps": self.steps,
            "tenants": len(self.tenants),
            "per_funnel": dict(sorted(self.per_funnel.items())),
        }


def _route(
    paths: Sequence[Path], bounds: list[str], work: Path, conform: Any, exclude: frozenset[str]
) -> list[Path]:
    """Append every input row to its bucket's file; the bucket files written, in id order."""
    count = len(bounds) + 1
    files = [work / f"bucket-{i:05d}.arrows" for i in range(count)]
    writers: dict[int, _BucketWriter] = {}
    try:
        for path in paths:
            for batch in pq.ParquetFile(path).iter_batches(BATCH_ROWS):
                table = conform(pa.Table.from_batches([batch]))
                if exclude:
                    keep = pc.invert(
                        pc.is_in(table.column("case_id"), value_set=pa.array(sorted(exclude)))
                    )
                    table = table.filter(keep)
                ids = table.column("case_id").to_pylist()
                slots = pa.array([bisect.bisect_right(bounds, i) for i in ids], pa.int32())
                for slot in pc.unique(slots).to_pylist():
                    rows = table.filter(pc.equal(slots, slot))
                    if slot not in writers:
                        writers[slot] = _BucketWriter(files[slot])
                    writers[slot].write(rows)
    finally:
        for writer in writers.values():
            writer.close()
    return [f for i, f in enumerate(files) if i in writers]


class _BucketWriter:
    """One bucket's scratch file: an Arrow IPC stream of GOLDEN_SCHEMA batches."""

    def __init__(self, path: Path) -> None:
        self._sink = pa.OSFile(str(path), "wb")
        self._writer = pa.ipc.new_stream(self._sink, GOLDEN_SCHEMA, options=_BUCKET_OPTIONS)

    def write(self, rows: pa.Table) -> None:
        self._writer.write_table(rows)

    def close(self) -> None:
        try:
            self._writer.close()
        finally:
            self._sink.close()


def _sorted_buckets(files: list[Path]) -> Iterator[pa.Table]:
    for path in files:
        with pa.OSFile(str(path), "rb") as source:  # read into memory: no mapping kept
            table = pa.ipc.open_stream(source).read_all()
        path.unlink()
        yield table.sort_by("case_id").combine_chunks()


class _FileCutter:
    """Appends sorted rows to cases-NNNN files of ``max_rows`` rows, ``group`` rows a group."""

    def __init__(self, out_dir: Path, total: int, max_rows: int, group: int, options: dict):
        self.out_dir, self.max_rows, self.group, self.options = out_dir, max_rows, group, options
        self.count = max(1, math.ceil(total / max_rows))
        self.index = -1
        self.writer: pq.ParquetWriter | None = None
        self.rows = 0
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.entries: list[dict[str, Any]] = []
        self._first: str | None = None
        self._last: str | None = None

    def _open(self, name_of: Any) -> None:
        self.index += 1
        self.path = self.out_dir / name_of(self.index, self.count)
        self.writer = pq.ParquetWriter(
            self.path, GOLDEN_SCHEMA, sorting_columns=[pq.SortingColumn(0)], **self.options
        )
        self.rows, self._first, self._last = 0, None, None

    def _flush(self, size: int) -> None:
        table = pa.concat_tables(self.pending).combine_chunks()
        head, rest = table.slice(0, size), table.slice(size)
        assert self.writer is not None
        self.writer.write_table(head, row_group_size=self.group)
        ids = head.column("case_id")
        if head.num_rows:
            self._first = self._first or ids[0].as_py()
            self._last = ids[-1].as_py()
        self.rows += head.num_rows
        self.pending = [rest] if rest.num_rows else []
        self.pending_rows = rest.num_rows

    def add(self, table: pa.Table, name_of: Any, entry_of: Any) -> None:
        self.pending.append(table)
        self.pending_rows += table.num_rows
        while self.pending_rows:
            if self.writer is None:
                self._open(name_of)
            room = self.max_rows - self.rows
            size = min(self.group, room)
            if self.pending_rows < size:
                return
            self._flush(size)
            if self.rows == self.max_rows:
                self._close(entry_of)

    def _close(self, entry_of: Any) -> None:
        assert self.writer is not None
        self.writer.close()
        self.writer = None
        self.entries.append(
            entry_of(self.path, rows=self.rows, min_case_id=self._first, max_case_id=self._last)
        )

    def finish(self, name_of: Any, entry_of: Any) -> list[dict[str, Any]]:
        if self.pending_rows:
            if self.writer is None:
                self._open(name_of)
            self._flush(self.pending_rows)
        if self.writer is None and not self.entries:
            self._open(name_of)  # an empty set still has one (empty) case file
        if self.writer is not None:
            self._close(entry_of)
        return self.entries


def write_bucketed(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    conform: Any,
    name_of: Any,
    entry_of: Any,
    max_rows_per_file: int,
    row_group_rows: int,
    compression_level: int | None,
    bucket_rows: int,
    exclude: frozenset[str] = frozenset(),
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Write the cases of ``paths`` (less the ids in ``exclude``) sorted by case id into
    ``out_dir`` (see module docstring); the manifest file entries and counts."""
    ids = _ids(paths, exclude)
    check_ids(ids)
    bounds = boundaries(ids, max(bucket_rows, 1))
    total = len(ids)
    del ids
    options = {
        "compression": "zstd",
        "compression_level": compression_level,
        "write_statistics": True,
        "write_page_index": True,
    }
    cutter = _FileCutter(out_dir, total, max_rows_per_file, row_group_rows, options)
    counts = CaseCounts()
    work = Path(tempfile.mkdtemp(prefix="buckets-", dir=out_dir))
    try:
        files = _route(paths, bounds, work, conform, exclude)
        for bucket in _sorted_buckets(files):
            counts.add(bucket)
            cutter.add(bucket, name_of, entry_of)
            del bucket
        entries = cutter.finish(name_of, entry_of)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return entries, counts.as_dict()
