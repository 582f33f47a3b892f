"""A version's ``clusters.parquet`` written from a file, one range of cluster ids at a time.

The cluster table has a row per candidate of the night (1.3M rows at 2M sessions), and
``case_files.write_clusters`` marks and sorts it in memory, so the publishing process grew with
the night. ``write_clusters_from`` writes the same rows in the same order (every flat column
ascending, ``cluster_id`` first, rows without a cluster last) holding one range at a time: the
ranges come from the cluster ids alone (whole clusters, about ``rows`` rows each), one pass over
the file deals the rows into a scratch file per range, and each range is marked
(``mark_published``: a cluster never spans two ranges), sorted and appended.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.store.case_files import file_entry, sort_keys
from golden_distill.datasets.store.cluster_marks import mark_published
from golden_distill.datasets.store.layout import CLUSTERS_NAME

#: Rows per range: the publishing process holds one range's rows (a few copies) at a time.
RANGE_ROWS = 100_000


def range_bounds(cluster_ids: pl.Series, rows: int = RANGE_ROWS) -> pl.Series:
    """Ascending lower bounds of ranges of whole clusters, about ``rows`` rows each (nulls
    left out: they form a range of their own, last, where a sort puts them)."""
    sizes = cluster_ids.drop_nulls().value_counts(name="n").sort(cluster_ids.name)
    cut = (sizes.get_column("n").cum_sum() - sizes.get_column("n")) // max(1, rows)
    firsts = sizes.filter(cut != cut.shift(1, fill_value=-1))
    return firsts.get_column(cluster_ids.name)


def _range_of(cluster_ids: pl.Series, bounds: pl.Series) -> pl.Series:
    """Per row, the index of its range (``len(bounds)`` for a row without a cluster id)."""
    at = bounds.search_sorted(cluster_ids, side="right").cast(pl.Int64) - 1
    return at.zip_with(cluster_ids.is_not_null(), pl.Series([len(bounds)] * len(at)))


def write_clusters_from(
    source: Path, published_ids: pa.Array | pa.ChunkedArray, out_dir: Path, rows: int = RANGE_ROWS
) -> dict[str, Any]:
    """``clusters.parquet`` in ``out_dir`` from the cluster table in ``source`` (CLUSTER_SCHEMA
    columns and any extra flat ones), marked with the cases published; its file entry."""
    bounds = range_bounds(pl.read_parquet(source, columns=["cluster_id"]).to_series(), rows)
    scratch = Path(tempfile.mkdtemp(prefix="clusters-", dir=out_dir.parent))
    try:
        parts = _deal(source, bounds, scratch)
        path = out_dir / CLUSTERS_NAME
        writer: pq.ParquetWriter | None = None
        total = 0
        for part in parts:
            marked = mark_published(pq.read_table(part), published_ids)
            ordered = marked.sort_by(sort_keys(marked.schema)) if marked.num_rows else marked
            if writer is None:
                writer = pq.ParquetWriter(path, ordered.schema, compression="zstd")
            writer.write_table(ordered.combine_chunks())
            total += ordered.num_rows
            part.unlink()
        if writer is None:  # an empty table: the same file write_clusters writes
            empty = mark_published(pq.read_table(source), published_ids)
            pq.write_table(empty, path, compression="zstd")
        else:
            writer.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return file_entry(path, role="clusters", rows=total)


def _deal(source: Path, bounds: pl.Series, scratch: Path) -> list[Path]:
    """One pass over ``source``: each batch's rows appended to their range's scratch file;
    the files of the ranges that got rows, in range order."""
    writers: dict[int, pq.ParquetWriter] = {}
    file = pq.ParquetFile(source)
    try:
        for batch in file.iter_batches(batch_size=65_536):
            table = pa.Table.from_batches([batch])
            ranges = _range_of(pl.from_arrow(table.column("cluster_id")), bounds)
            frame = pl.DataFrame({"_range": ranges})
            for (index,), rows in frame.with_row_index().group_by("_range"):
                picked = table.take(rows.get_column("index").to_arrow())
                if index not in writers:
                    part = scratch / f"{index:06d}.parquet"
                    writers[index] = pq.ParquetWriter(part, table.schema)
                writers[index].write_table(picked)
    finally:
        for writer in writers.values():
            writer.close()
    return [scratch / f"{index:06d}.parquet" for index in sorted(writers)]
