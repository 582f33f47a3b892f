"""``datasets/scratch_ipc.py``: scratch files read back as they were written."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from golden_distill.datasets.scratch_ipc import SCRATCH_SUFFIX, ScratchWriter, read_scratch


def test_appended_tables_read_back_in_order_with_their_types(tmp_path: Path) -> None:
    first = pl.DataFrame(
        {"case_id": ["b", "a"], "n": [1, 2], "funnels": [["x"], []], "s": [0.5, None]}
    ).to_arrow()  # polars' own Arrow types (string views), as the dedup buckets write them
    second = pl.DataFrame(
        {"case_id": ["c"], "n": [3], "funnels": [["y", "z"]], "s": [1.0]}
    ).to_arrow()
    path = tmp_path / f"bucket{SCRATCH_SUFFIX}"
    writer = ScratchWriter(path, first.schema)
    writer.write(first)
    writer.write(second.cast(writer.schema))
    writer.close()
    back = read_scratch(path)
    assert back.schema == first.schema
    assert back.equals(pa.concat_tables([first, second.cast(first.schema)]))
    assert pl.from_arrow(back)["case_id"].to_list() == ["b", "a", "c"]


def test_rows_of_another_schema_are_refused(tmp_path: Path) -> None:
    writer = ScratchWriter(tmp_path / f"x{SCRATCH_SUFFIX}", pa.schema([("case_id", pa.string())]))
    with pytest.raises(ValueError, match="schema"):
        writer.write(pa.table({"case_id": [1]}))
    writer.close()
