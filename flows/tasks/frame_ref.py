"""A frame of the selection that may live in the work folder instead of in memory.

The ``Selection`` travels from the select worker to the flow (pickled for Prefect's result and
again for the pool's return) and stays in the flow's process through redaction and publishing.
Its frames that grow with the night, the decisions (one row per record read), the cluster
table and the representatives before the quotas, would be copied by every pickling. The
select task writes them once to the work folder and the ``Selection`` holds a ``FrameRef`` to
each; a step reads the columns and rows it needs when it needs them (polars
pushes the filter and the projection into the Parquet scan). A frame an incremental run
computes from the previous version (bounded by the set's size) is held in memory instead.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from golden_distill.flows.work_folder import WorkFolder


@dataclass(frozen=True)
class FrameRef:
    """A frame in memory (``frame``) or a Parquet file in the work folder (``location``)."""

    height: int
    location: str | None = None
    work: WorkFolder | None = None
    frame: pl.DataFrame | None = None

    @classmethod
    def held(cls, frame: pl.DataFrame) -> FrameRef:
        return cls(height=frame.height, frame=frame)

    @classmethod
    def spill(cls, frame: pl.DataFrame, work: WorkFolder, location: str) -> FrameRef:
        """Write ``frame`` to ``location`` (a local path or a URL of the work folder)."""
        writer = FrameWriter(work, location)
        writer.write(frame)
        return writer.close(frame.head(0))

    @property
    def spilled(self) -> bool:
        return self.frame is None

    def present(self) -> bool:
        """False when the file was removed since (a cleaned work folder)."""
        if self.frame is not None:
            return True
        assert self.work is not None and self.location is not None
        return self.work.exists(self.location)

    def read(self, columns: list[str] | None = None) -> pl.DataFrame:
        if self.frame is not None:
            return self.frame if columns is None else self.frame.select(columns)
        assert self.work is not None and self.location is not None
        return self.work.read_frame(self.location, columns=columns)

    def scan(self) -> pl.LazyFrame:
        if self.frame is not None:
            return self.frame.lazy()
        assert self.work is not None and self.location is not None
        return self.work.scan_frame(self.location)


class FrameWriter:
    """Writes a frame part by part (same schema) to one Parquet file of the work folder, so
    the whole frame is never in memory; ``close`` returns its ``FrameRef``."""

    def __init__(self, work: WorkFolder, location: str) -> None:
        import tempfile

        self.work, self.location = work, location
        if work.is_local:
            Path(location).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._path = Path(location)
        else:  # a private local file, uploaded at ``close``
            self._path = Path(tempfile.mkdtemp(prefix="golden-frame-")) / "part.parquet"
        self._writer: pq.ParquetWriter | None = None
        self.height = 0

    def write(self, frame: pl.DataFrame) -> None:
        table = frame.to_arrow()
        if self._writer is None:
            self._writer = pq.ParquetWriter(str(self._path), table.schema)
        self._writer.write_table(table.cast(self._writer.schema))
        self.height += frame.height

    def close(self, empty: pl.DataFrame) -> FrameRef:
        """The written frame (``empty``, a frame of the right schema, when nothing was)."""
        if self._writer is None:
            empty.write_parquet(self._path)
        else:
            self._writer.close()
        if self.work.is_local:
            folder = self._path.parent
            self.work.make_private(folder, [self._path], stop_at=folder)
        else:
            self.work.put_file(self._path, self.location)
            shutil.rmtree(self._path.parent, ignore_errors=True)
        return FrameRef(height=self.height, location=self.location, work=self.work)
