"""Where the funnel stage reads cases from: a frame, or canonical Parquet read field by field.

The funnels need a small part of each case (ids, intent confidence, a few outcome fields and six
or seven fields of each step); responses, context and free text are most of the bytes. Parquet
stores nested fields as separate columns, so reading only those leaves (pyarrow's nested column
projection, ``steps.list.element.name``) reads a fraction of the file and keeps memory small.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.inputs import INPUT_COLUMNS, OUTCOME_FIELDS, SHARED_STEP_FIELDS
from golden_distill.filters.registry import all_funnels

Source = pl.DataFrame | pl.LazyFrame | str | Path | Sequence[str | Path]


def leaf_columns(*configs: FunnelsConfig) -> list[str]:
    """The Parquet leaf paths the funnels need under any of ``configs`` (the shared fields plus
    the step fields each funnel declares)."""
    declared = {f for c in configs for funnel in all_funnels(c) for f in funnel.step_fields()}
    step_fields = [*SHARED_STEP_FIELDS, *sorted(declared - set(SHARED_STEP_FIELDS))]
    return [
        "case_id",
        "tenant_id",
        "intent.confidence",
        *(f"outcome.{f}" for f in OUTCOME_FIELDS),
        *(f"steps.list.element.{f}" for f in step_fields),
    ]


def parquet_files(source: Source) -> list[str] | None:
    """The Parquet files ``source`` names (directories expanded, sorted), or None for frames."""
    if isinstance(source, pl.DataFrame | pl.LazyFrame):
        return None
    items = [source] if isinstance(source, str | Path) else list(source)
    files: list[str] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(str(p) for p in path.rglob("*.parquet"))
            if not found:
                raise FileNotFoundError(f"{path}: no .parquet files")
            files.extend(found)
        else:
            files.append(str(path))
    return files


def as_lazy(source: Source) -> pl.LazyFrame:
    """A lazy view of whole cases: a frame, a Parquet file, a folder of shards, or a list."""
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    if isinstance(source, pl.LazyFrame):
        return source
    return pl.scan_parquet(parquet_files(source) or [])


def _frame(batch: pa.RecordBatch | pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)
    return frame


def iter_case_batches(
    source: Source, config: FunnelsConfig, batch_rows: int
) -> Iterator[pl.DataFrame]:
    """Batches of at most ``batch_rows`` cases holding what the funnels read."""
    files = parquet_files(source)
    if files is None:
        yield from as_lazy(source).select(INPUT_COLUMNS).collect_batches(chunk_size=batch_rows)
        return
    for file in files:
        parquet = pq.ParquetFile(file)
        columns = _columns_for(parquet, leaf_columns(config))
        for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns):
            yield _frame(batch)


def _columns_for(parquet: pq.ParquetFile, leaves: list[str]) -> list[str]:
    """``leaves`` when the file spells nested paths that way (pyarrow writers name list items
    ``element``; other writers may not), else the whole top-level columns."""
    paths = set(parquet.schema.names) | {
        parquet.schema.column(i).path for i in range(len(parquet.schema))
    }
    if all(leaf in paths for leaf in leaves):
        return leaves
    return list(INPUT_COLUMNS)


def read_cases(source: Source, *configs: FunnelsConfig) -> pl.DataFrame:
    """All cases of ``source``, only what the funnels read under ``configs`` (a preview)."""
    files = parquet_files(source)
    if files is None:
        return as_lazy(source).select(INPUT_COLUMNS).collect()
    tables = []
    for file in files:
        parquet = pq.ParquetFile(file)
        tables.append(parquet.read(columns=_columns_for(parquet, leaf_columns(*configs))))
    return _frame(pa.concat_tables(tables)) if tables else pl.DataFrame()
