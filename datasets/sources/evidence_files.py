"""Reading evidence tables from a folder of Parquet or CSV files.

A folder (a local path or any fsspec URL: ``s3://bucket/evidence/``, ``memory://...``) holds
``session_trace``, ``tool_call_trace`` and optionally ``context_snapshot``, each as
``<table>.parquet``, ``<table>.csv`` or a ``<table>/`` folder of Parquet parts. Local folders are
scanned by polars directly, remote ones through pyarrow datasets on the fsspec filesystem.

Files need not be sorted, so traces are gathered by hash bucket of ``trace_id``: each pass reads
only one bucket's rows (about ``bucket_rows`` tool-call rows), which bounds memory whatever the
table size at the cost of one scan per bucket. Rows with a NULL ``trace_id`` and calls or
snapshots of a trace that does not exist come out as ``RowProblem``\\s.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as pads
from fsspec import AbstractFileSystem
from fsspec.core import url_to_fs
from pyarrow.fs import FSSpecHandler, PyFileSystem

from golden_distill.datasets.quarantine import NULL_REQUIRED, ORPHAN_CALL
from golden_distill.datasets.sources.base import SourceError
from golden_distill.datasets.sources.evidence_schema import (
    CALLS,
    ORPHAN_SNAPSHOT,
    SESSION,
    SNAPSHOT,
    TABLES,
    RowProblem,
    TracePairer,
    TraceRows,
    kinds,
    required_columns,
)

_POLARS = {"text": pl.String, "float": pl.Float64, "int": pl.Int64, "bool": pl.Boolean}
_ARROW = {  # CSV through pyarrow: timestamps stay text and are parsed like SQL text
    "text": pa.string(),
    "float": pa.float64(),
    "int": pa.int64(),
    "bool": pa.bool_(),
    "ts": pa.string(),
}
_HASH_SEED = 20261130


def _is_local(fs: AbstractFileSystem) -> bool:
    return "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,))


def table_location(folder: str, table: str) -> tuple[str, str] | None:
    """(path, "parquet"|"csv"|"parquet-dir") of ``table`` in ``folder`` (path or fsspec URL)."""
    fs, root = url_to_fs(folder)
    root = root.rstrip("/")
    for suffix in ("parquet", "csv"):
        candidate = f"{root}/{table}.{suffix}"
        if fs.isfile(candidate):
            return candidate, suffix
    parts = f"{root}/{table}"
    if fs.isdir(parts) and fs.glob(f"{parts}/*.parquet"):
        return parts, "parquet-dir"
    return None


def is_evidence_folder(folder: str) -> bool:
    """True for a folder (local or fsspec URL) holding a session_trace table."""
    try:
        fs, root = url_to_fs(folder)
        return fs.isdir(root) and table_location(folder, SESSION) is not None
    except Exception:  # sniffing must never fail: unknown scheme, no credentials, no network...
        return False


def _csv_types(table: str, present: list[str]) -> dict[str, Any]:
    known = kinds(table)
    return {c: _POLARS.get(known[c], pl.String) for c in present if c in known}


def _scan(folder: str, location: str, file_format: str, table: str) -> pl.LazyFrame:
    """A lazy frame of ``table``'s known columns; remote folders go through pyarrow + fsspec."""
    known = kinds(table)
    fs, _ = url_to_fs(folder)
    if _is_local(fs):
        if file_format == "csv":
            present = pl.scan_csv(location, infer_schema=False).collect_schema().names()
            frame = pl.scan_csv(location, schema_overrides=_csv_types(table, present))
        else:
            glob = f"{location}/*.parquet" if file_format == "parquet-dir" else location
            frame = pl.scan_parquet(glob)
    else:
        filesystem = PyFileSystem(FSSpecHandler(fs))
        if file_format == "csv":
            with fs.open(location, "rb") as fh:
                present = next(csv.reader([fh.readline().decode("utf-8-sig")]))
            arrow_types = {c: _ARROW[known[c]] for c in present if c in known}
            options = pacsv.ConvertOptions(column_types=arrow_types, strings_can_be_null=True)
            fmt: Any = pads.CsvFileFormat(convert_options=options)
        else:
            fmt = "parquet"
        frame = pl.scan_pyarrow_dataset(pads.dataset(location, filesystem=filesystem, format=fmt))
    present = frame.collect_schema().names()
    return frame.select([c for c in present if c in known])


class FileEvidenceReader:
    def __init__(self, folder: str, bucket_rows: int) -> None:
        self.folder = folder
        self.bucket_rows = bucket_rows

    def _frames(self) -> dict[str, pl.LazyFrame | None]:
        if not is_evidence_folder(self.folder):
            raise SourceError(f"{self.folder}: no session_trace.parquet or session_trace.csv")
        frames: dict[str, pl.LazyFrame | None] = {}
        for table in TABLES:
            location = table_location(self.folder, table)
            if location is None:
                if table != SNAPSHOT:
                    raise SourceError(f"{self.folder}: no {table}.parquet or {table}.csv")
                frames[table] = None
                continue
            frame = _scan(self.folder, *location, table)
            missing = set(required_columns(table)) - set(frame.collect_schema().names())
            if missing:
                raise SourceError(
                    f"{self.folder}: {table} lacks column(s) {', '.join(sorted(missing))}"
                )
            frames[table] = frame
        return frames

    def __iter__(self) -> Iterator[TraceRows | RowProblem]:
        frames = self._frames()
        for table, frame in frames.items():
            if frame is not None:
                for row in (
                    frame.filter(pl.col("trace_id").is_null()).collect().iter_rows(named=True)
                ):
                    detail = f"{table}: trace_id is NULL"
                    yield RowProblem(table, NULL_REQUIRED, detail, row)
        calls = frames[CALLS]
        assert calls is not None
        sessions = frames[SESSION]
        assert sessions is not None
        size = max(
            calls.select(pl.len()).collect().item(), sessions.select(pl.len()).collect().item()
        )
        buckets = max(1, math.ceil(size / self.bucket_rows))
        position = 0
        for bucket in range(buckets):
            for item in self._bucket(frames, bucket, buckets, position):
                if isinstance(item, TraceRows) or item.position is not None:
                    position += 1
                yield item

    def _bucket(
        self, frames: dict[str, pl.LazyFrame | None], bucket: int, buckets: int, start: int
    ) -> Iterator[TraceRows | RowProblem]:
        key = pl.col("trace_id")
        keep = key.is_not_null()
        if buckets > 1:
            keep = keep & (key.cast(pl.String).hash(seed=_HASH_SEED) % buckets == bucket)

        def load(table: str, order: list[str]) -> list[dict[str, Any]]:
            frame = frames[table]
            if frame is None:
                return []
            frame = frame.filter(keep).with_columns(key.cast(pl.String))
            return frame.sort(order, nulls_last=True, maintain_order=True).collect().to_dicts()

        sessions = load(SESSION, ["trace_id"])
        calls = _group(load(CALLS, ["trace_id", "call_seq"]))
        snaps = _group(load(SNAPSHOT, ["trace_id"]))
        yield from TracePairer(position=start).pair(sessions, snaps, calls)
        for table, leftovers, reason, id_key in (
            (CALLS, calls, ORPHAN_CALL, "call_id"),
            (SNAPSHOT, snaps, ORPHAN_SNAPSHOT, "snapshot_id"),
        ):
            for trace_id, rows in leftovers.items():
                for row in rows:
                    detail = f"{table} {id_key}={row.get(id_key)}: trace {trace_id} not found"
                    yield RowProblem(table, reason, detail, row)


def _group(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["trace_id"], []).append(row)
    return grouped
