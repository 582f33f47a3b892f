"""Scratch files a process writes once and reads back once, whole: LZ4 Arrow IPC streams.

Parquet spends its encoding (dictionaries, pages, statistics) and its decoding on a file that
is read back right away by the same code; an IPC stream is read as it was written. At a million
sessions, publish's case buckets took twice the CPU to write and three times to read as Parquet
(docs/benchmarks.md, session 11). Used for those buckets (``store/case_buckets.py``) and the
select step's dedup buckets (``flows/tasks/dedup_step.py``).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

#: Scratch suffix: an Arrow IPC stream file.
SCRATCH_SUFFIX = ".arrows"
_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


class ScratchWriter:
    """One scratch file: tables of ``schema`` appended as record batches."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.schema = schema
        self._sink = pa.OSFile(str(path), "wb")
        self._writer = pa.ipc.new_stream(self._sink, schema, options=_OPTIONS)

    def write(self, rows: pa.Table) -> None:
        self._writer.write_table(rows)

    def close(self) -> None:
        try:
            self._writer.close()
        finally:
            self._sink.close()


def read_scratch(path: Path) -> pa.Table:
    """A scratch file's rows, read into memory (no mapping of the file is kept)."""
    with pa.OSFile(str(path), "rb") as source:
        return pa.ipc.open_stream(source).read_all()
