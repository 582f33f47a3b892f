"""Writing canonical cases to Parquet shards in bounded memory.

Readers yield row dicts one case at a time; ``ShardWriter`` buffers ``batch_rows`` of them,
converts the batch to Arrow with the canonical schema (so a type mismatch fails here, loudly, not
in a later step) and appends it as a row group to the current shard file, rolling over to a new
file every ``rows_per_shard`` rows. Files appear under their final name only when complete
(written as ``*.parquet.tmp`` then renamed), so a crash never leaves a half shard that looks whole.
``MemorySink`` takes the same calls and keeps the batches as one Arrow table instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.schema import CASE_SCHEMA

DEFAULT_BATCH_ROWS = 2_000
DEFAULT_ROWS_PER_SHARD = 100_000


class ShardWriter:
    def __init__(
        self,
        out_dir: Path,
        prefix: str = "part",
        *,
        schema: pa.Schema = CASE_SCHEMA,
        batch_rows: int = DEFAULT_BATCH_ROWS,
        rows_per_shard: int = DEFAULT_ROWS_PER_SHARD,
    ) -> None:
        self.out_dir = Path(out_dir)
        self.prefix = prefix
        self.schema = schema
        self.batch_rows = batch_rows
        self.rows_per_shard = rows_per_shard
        self.paths: list[Path] = []
        self.rows_written = 0
        self.bytes_written = 0
        self._buffer: list[dict[str, Any]] = []
        self._writer: pq.ParquetWriter | None = None
        self._tmp: Path | None = None
        self._rows_in_shard = 0

    def write(self, row: dict[str, Any]) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= self.batch_rows:
            self._flush()

    def write_many(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            self.write(row)

    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Append rows already in Arrow form (readers that build columns themselves, faster).

        Rows buffered by ``write`` go first, so the order of rows is the order of calls.
        """
        self._flush()
        if batch.num_rows == 0:
            return
        if batch.schema != self.schema:
            batch = batch.cast(self.schema)  # same fields required; raises loudly otherwise
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        self._write_table(table)

    def _flush(self) -> None:
        if not self._buffer:
            return
        table = pa.Table.from_pylist(self._buffer, schema=self.schema)
        self._buffer = []
        self._write_table(table)

    def _write_table(self, table: pa.Table) -> None:
        if self._writer is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            final = self.out_dir / f"{self.prefix}-{len(self.paths):05d}.parquet"
            self._tmp = final.with_suffix(".parquet.tmp")
            self._writer = pq.ParquetWriter(self._tmp, self.schema, compression="zstd")
            self.paths.append(final)
        self._writer.write_table(table)
        self.rows_written += table.num_rows
        self._rows_in_shard += table.num_rows
        if self._rows_in_shard >= self.rows_per_shard:
            self._close_shard()

    def _close_shard(self) -> None:
        if self._writer is None or self._tmp is None:
            return
        self._writer.close()
        final = self.paths[-1]
        os.replace(self._tmp, final)
        self.bytes_written += final.stat().st_size
        self._writer, self._tmp, self._rows_in_shard = None, None, 0

    def close(self) -> list[Path]:
        """Flush, finish the last shard and return every shard path written."""
        self._flush()
        self._close_shard()
        return list(self.paths)

    def abort(self) -> None:
        """Drop the shard being written (its temp file); completed shards stay."""
        if self._writer is not None:
            self._writer.close()
        if self._tmp is not None and self._tmp.exists():
            self._tmp.unlink()
        if self.paths and not self.paths[-1].exists():
            self.paths.pop()
        self._writer, self._tmp, self._buffer = None, None, []

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class MemorySink(ShardWriter):
    """``ShardWriter``'s rows and batches (same buffering, same casts), kept in memory as one
    Arrow table instead of Parquet files: for a caller that reads the cases straight back (the
    flow's shard step), which then pays no Parquet encoding, compression and decoding (a
    quarter of its read time, measured by bench/shard_read.py)."""

    def __init__(
        self, *, schema: pa.Schema = CASE_SCHEMA, batch_rows: int = DEFAULT_BATCH_ROWS
    ) -> None:
        super().__init__(Path(), schema=schema, batch_rows=batch_rows, rows_per_shard=sys.maxsize)
        self._tables: list[pa.Table] = []

    def _write_table(self, table: pa.Table) -> None:
        self._tables.append(table)
        self.rows_written += table.num_rows

    def _close_shard(self) -> None:
        return None  # no file

    def abort(self) -> None:
        self._tables, self._buffer = [], []

    def table(self) -> pa.Table:
        """Every row written, in order (an empty table of the schema when none)."""
        self._flush()
        if not self._tables:
            return self.schema.empty_table()
        return pa.concat_tables(self._tables)
