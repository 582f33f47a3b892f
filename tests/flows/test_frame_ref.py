"""The selection's large frames kept in the work folder (flows/tasks/frame_ref.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import polars as pl

from golden_distill.flows.tasks.frame_ref import FrameRef, FrameWriter
from golden_distill.flows.work_folder import WorkFolder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_spilled_frame_reads_back_by_column_and_row(tmp_path):
    tmp_path.chmod(0o755)
    work = WorkFolder(str(tmp_path))
    frame = pl.DataFrame({"case_id": ["a", "b", "c"], "status": ["selected", "no_funnel", "x"]})
    ref = FrameRef.spill(frame, work, str(tmp_path / "sel" / "decisions.parquet"))
    assert ref.spilled and ref.present() and ref.height == 3
    assert ref.read().equals(frame)
    assert ref.read(["case_id"]).columns == ["case_id"]
    picked = ref.scan().filter(pl.col("status") == "selected").collect()
    assert picked["case_id"].to_list() == ["a"]
    # raw-data permissions on what it wrote, never on the folders around it
    assert _mode(tmp_path / "sel" / "decisions.parquet") == 0o600
    assert _mode(tmp_path / "sel") == 0o700 and _mode(tmp_path) == 0o755
    (tmp_path / "sel" / "decisions.parquet").unlink()
    assert not ref.present()  # a cleaned work folder: the selection is recomputed


def test_a_frame_written_part_by_part_is_one_file(tmp_path):
    work = WorkFolder(str(tmp_path))
    writer = FrameWriter(work, str(tmp_path / "sel" / "paths.parquet"))
    for part in (["a", "b"], ["c"]):
        writer.write(pl.DataFrame({"case_id": part}))
    ref = writer.close(pl.DataFrame(schema={"case_id": pl.String()}))
    assert ref.height == 3 and ref.read()["case_id"].to_list() == ["a", "b", "c"]
    assert _mode(tmp_path / "sel" / "paths.parquet") == 0o600
    empty = FrameWriter(work, str(tmp_path / "e" / "paths.parquet"))
    assert empty.close(pl.DataFrame(schema={"case_id": pl.String()})).read().height == 0


def test_a_remote_work_folder_gets_the_files_too():
    import uuid

    work = WorkFolder(f"memory://frames-{uuid.uuid4().hex[:8]}")
    location = work.join("shards", "selection-x", "paths.parquet")
    writer = FrameWriter(work, location)
    writer.write(pl.DataFrame({"case_id": ["a"]}))
    ref = writer.close(pl.DataFrame(schema={"case_id": pl.String()}))
    assert work.exists(location) and ref.read()["case_id"].to_list() == ["a"]
    spilled = FrameRef.spill(pl.DataFrame({"n": [1, 2]}), work, work.join("d.parquet"))
    assert spilled.read()["n"].sum() == 3


def test_a_held_frame_needs_no_file():
    frame = pl.DataFrame({"case_id": ["a"], "n": [1]})
    ref = FrameRef.held(frame)
    assert not ref.spilled and ref.present()
    assert ref.read(["n"]).columns == ["n"] and ref.scan().collect().equals(frame)
