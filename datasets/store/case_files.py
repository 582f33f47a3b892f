"""Turning the pipeline's cases into the Parquet files of a version, deterministically.

Cases are conformed to GOLDEN_SCHEMA (a wrong or missing column fails here, before anything is
written), sorted by case_id and cut into files of at most ``max_rows_per_file`` rows with small
row groups: min/max statistics on case_id then let a reader fetch one case by reading one group.
The same cases always give the same bytes, which is what lets a re-publish be recognised.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from golden_distill.datasets.schema import ADDED_FIELDS, CASE_FIELDS, GOLDEN_SCHEMA
from golden_distill.datasets.store.case_buckets import CaseIdError, write_bucketed
from golden_distill.datasets.store.layout import CLUSTERS_NAME, cases_file_name
from golden_distill.datasets.store.manifest import file_sha256


class CasesError(ValueError):
    """The cases given to publish do not fit GOLDEN_SCHEMA (names columns and ids only)."""


def read_case_inputs(cases: pa.Table | Sequence[Path | str]) -> pa.Table:
    if isinstance(cases, pa.Table):
        return cases
    tables = []
    for path in cases:
        try:
            tables.append(pq.read_table(path))
        except (OSError, pa.ArrowInvalid) as exc:
            raise CasesError(f"{path}: cannot read cases ({type(exc).__name__})") from None
    if not tables:
        return GOLDEN_SCHEMA.empty_table()
    return pa.concat_tables([conform(t) for t in tables])


def conform(table: pa.Table) -> pa.Table:
    """``table`` with exactly GOLDEN_SCHEMA's columns and types (pipeline columns may be absent)."""
    extra = sorted(set(table.column_names) - set(GOLDEN_SCHEMA.names))
    if extra:
        raise CasesError(f"unknown case columns: {', '.join(extra)}")
    required = {f.name for f in CASE_FIELDS} - set(ADDED_FIELDS)  # added later: null if absent
    missing = sorted(required - set(table.column_names))
    if missing:
        raise CasesError(f"missing case columns: {', '.join(missing)}")
    columns = []
    for field in GOLDEN_SCHEMA:
        if field.name in table.column_names:
            column = table.column(field.name)
            try:
                columns.append(column.cast(field.type) if column.type != field.type else column)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise CasesError(
                    f"column {field.name}: type {column.type} does not match {field.type}"
                ) from None
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=GOLDEN_SCHEMA)


def prepare_cases(cases: pa.Table | Sequence[Path | str]) -> pa.Table:
    """Conformed, de-chunked, sorted by case_id; duplicate or null ids are an error."""
    table = conform(read_case_inputs(cases))
    ids = table.column("case_id")
    if ids.null_count:
        raise CasesError(f"{ids.null_count} case(s) without case_id")
    if pc.count_distinct(ids).as_py() != table.num_rows:
        counts = pc.value_counts(ids)
        dupes = [v["values"] for v in counts.to_pylist() if v["counts"] > 1][:5]
        raise CasesError(f"duplicate case_id(s): {', '.join(map(str, dupes))}")
    return table.sort_by("case_id").combine_chunks()


def write_case_files(
    table: pa.Table,
    out_dir: Path,
    *,
    max_rows_per_file: int,
    row_group_rows: int,
    compression_level: int | None = None,
) -> list[dict[str, Any]]:
    """Write the sorted cases; one manifest file entry per file written."""
    count = max(1, math.ceil(table.num_rows / max_rows_per_file))
    entries = []
    for index in range(count):
        part = table.slice(index * max_rows_per_file, max_rows_per_file)
        name = cases_file_name(index, count)
        path = out_dir / name
        pq.write_table(
            part,
            path,
            row_group_size=row_group_rows,
            compression="zstd",
            compression_level=compression_level,
            write_statistics=True,
            write_page_index=True,
            sorting_columns=[pq.SortingColumn(0)],
        )
        ids = part.column("case_id")
        entries.append(
            file_entry(
                path,
                role="cases",
                rows=part.num_rows,
                min_case_id=ids[0].as_py() if part.num_rows else None,
                max_case_id=ids[-1].as_py() if part.num_rows else None,
            )
        )
    return entries


#: Cases per sorting bucket when publishing from files (memory: about one bucket of cases).
BUCKET_ROWS = 20_000


def stage_cases(
    cases: pa.Table | Sequence[Path | str],
    out_dir: Path,
    *,
    max_rows_per_file: int,
    row_group_rows: int,
    compression_level: int | None = None,
    bucket_rows: int = BUCKET_ROWS,
    exclude: frozenset[str] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Write the version's case files into ``out_dir``: their manifest entries and counts.

    Cases given as files are streamed through sorted buckets (case_buckets.py: memory does not
    grow with the set; ``exclude``: case ids left out); a table already in memory is sorted and
    written as it is."""
    if isinstance(cases, pa.Table):
        table = prepare_cases(cases)
        files = write_case_files(
            table,
            out_dir,
            max_rows_per_file=max_rows_per_file,
            row_group_rows=row_group_rows,
            compression_level=compression_level,
        )
        return files, count_cases(table)
    paths = [Path(p) for p in cases]
    for path in paths:
        try:
            pq.read_schema(path)
        except (OSError, pa.ArrowInvalid) as exc:
            raise CasesError(f"{path}: cannot read cases ({type(exc).__name__})") from None
    try:
        return write_bucketed(
            paths,
            out_dir,
            conform=conform,
            name_of=cases_file_name,
            entry_of=lambda path, **extra: file_entry(path, role="cases", **extra),
            max_rows_per_file=max_rows_per_file,
            row_group_rows=row_group_rows,
            compression_level=compression_level,
            bucket_rows=bucket_rows,
            exclude=exclude or frozenset(),
        )
    except CaseIdError as exc:
        raise CasesError(str(exc)) from None


def staged_batches(paths: Sequence[Path], rows: int = 2048) -> Iterator[pa.Table]:
    """The staged case files read back in small batches (a case never spans two)."""
    for path in paths:
        for batch in pq.ParquetFile(path).iter_batches(rows):
            yield pa.Table.from_batches([batch])


def sort_keys(schema: pa.Schema) -> list[tuple[str, str]]:
    """The canonical row order of a clusters file: every flat column, ascending."""
    return [
        (f.name, "ascending")
        for f in schema
        if not pa.types.is_nested(f.type) and not pa.types.is_dictionary(f.type)
    ]


def write_clusters(clusters: pa.Table, out_dir: Path) -> dict[str, Any]:
    """Clusters in a canonical row order (by every flat column), so that the same clusters
    produced in another order (a parallel group-by) still give the same bytes. (From a file,
    one range of clusters at a time: ``cluster_file.write_clusters_from``.)"""
    keys = sort_keys(clusters.schema)
    ordered = clusters.sort_by(keys) if keys and clusters.num_rows else clusters
    path = out_dir / CLUSTERS_NAME
    pq.write_table(ordered.combine_chunks(), path, compression="zstd")
    return file_entry(path, role="clusters", rows=clusters.num_rows)


def file_entry(path: Path, *, role: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": path.name,
        "role": role,
        "size": path.stat().st_size,
        "sha256": file_sha256(path),
        **extra,
    }


def count_cases(table: pa.Table) -> dict[str, Any]:
    """Totals and cases per funnel (a case can be in several funnels)."""
    funnels = table.column("funnels")
    flat = pc.list_flatten(funnels)
    per_funnel = {
        row["values"]: row["counts"] for row in pc.value_counts(flat).to_pylist() if row["values"]
    }
    steps = pc.list_value_length(table.column("steps"))
    return {
        "cases": table.num_rows,
        "steps": int(pc.sum(steps).as_py() or 0),
        "tenants": pc.count_distinct(table.column("tenant_id")).as_py(),
        "per_funnel": dict(sorted(per_funnel.items())),
    }
