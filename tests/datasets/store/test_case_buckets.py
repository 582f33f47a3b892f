"""Bounded-memory publishing (datasets/store/case_buckets.py): cases given as files are written
through sorted range buckets, and give exactly the files of sorting the whole set at once."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.store.case_files import CasesError, stage_cases

LAYOUT = {"max_rows_per_file": 70, "row_group_rows": 16}


def _parts(table, folder: Path, sizes: list[int]) -> list[Path]:
    """``table`` shuffled into parts of the given sizes (out of id order, as the flow writes)."""
    folder.mkdir()
    shuffled = table.take(list(reversed(range(table.num_rows))))
    paths, start = [], 0
    for index, size in enumerate(sizes):
        path = folder / f"part-{index}.parquet"
        pq.write_table(shuffled.slice(start, size), path)
        paths.append(path)
        start += size
    return paths


def test_buckets_write_the_same_files_and_counts_as_one_sort(tmp_path: Path, casegen):
    table = casegen.make_table(200)
    whole, streamed = tmp_path / "whole", tmp_path / "streamed"
    whole.mkdir()
    streamed.mkdir()
    expected, expected_counts = stage_cases(table, whole, **LAYOUT)
    parts = _parts(table, tmp_path / "parts", [33, 100, 67])
    files, counts = stage_cases(parts, streamed, bucket_rows=23, **LAYOUT)
    assert counts == expected_counts
    assert [f["rows"] for f in files] == [70, 70, 60]
    assert files == expected  # names, sizes, sha256, id ranges: the same bytes
    assert sorted(p.name for p in streamed.iterdir()) == [f["name"] for f in files]
    groups = pq.ParquetFile(streamed / files[0]["name"]).metadata.num_row_groups
    assert groups == 5  # 70 rows in groups of 16


def test_buckets_reject_repeated_and_missing_ids(tmp_path: Path, casegen):
    table = casegen.make_table(40)
    out = tmp_path / "out"
    out.mkdir()
    folder = tmp_path / "p"
    folder.mkdir()
    pq.write_table(table, folder / "a.parquet")
    pq.write_table(table.slice(5, 1), folder / "b.parquet")
    with pytest.raises(CasesError, match="duplicate case_id"):
        stage_cases([folder / "a.parquet", folder / "b.parquet"], out, bucket_rows=8, **LAYOUT)


def test_empty_set_still_has_one_case_file(tmp_path: Path, casegen):
    table = casegen.make_table(3).slice(0, 0)
    out = tmp_path / "out"
    out.mkdir()
    path = tmp_path / "empty.parquet"
    pq.write_table(table, path)
    files, counts = stage_cases([path], out, **LAYOUT)
    assert len(files) == 1 and files[0]["rows"] == 0 and counts["cases"] == 0
