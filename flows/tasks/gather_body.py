"""Gathering one redaction task's published rows into a publish part, importable without Prefect.

Publishing reads every redaction task's file, keeps the representatives' rows, adds their
cluster, split, review marks and trust tier, and writes them as a Parquet part for
``publish_version``. Each part is a pure function of one file and the representatives, so a
large run gathers on two cores (``datasets/front_and_back.py``: this process from the front, one
helper from the back), at the end of the run when the redaction workers are gone. The
representatives cross to the helper once, as a file (``save_representatives``), not with every
part.

A case id in two files (the same record in two inputs) is published once, from the first file:
each part reports its ids and the caller drops the later copies (``without_ids``), which is what
one process walking the files in order did.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.filters.review import corrected_expected
from golden_distill.filters.trust import trust_expr
from golden_distill.flows.tasks.run_stats import published_stats
from golden_distill.flows.work_folder import WorkFolder


@dataclass(frozen=True)
class GatherJob:
    """What every part of one publish shares (picklable: it goes to the helper once per part)."""

    representatives: str  # the file ``save_representatives`` wrote
    out_dir: str  # where the parts go (local)
    work: WorkFolder  # reads the redacted files (local or remote)


@dataclass(frozen=True)
class GatheredPart:
    """One written part: its file, its ``published_stats`` and its case ids, in row order."""

    path: Path
    stats: dict[str, Any]
    case_ids: list[str]


def save_representatives(reps: pl.DataFrame, out_dir: Path) -> str:
    """``reps`` (one row per case id) as an Arrow IPC file in ``out_dir``, for ``GatherJob``."""
    path = out_dir / "representatives.arrow"
    reps.write_ipc(path, compression="uncompressed")
    return str(path)


@lru_cache(maxsize=1)
def _representatives(path: str) -> pl.DataFrame:
    """Read once per process and publish (the helper gathers many parts with it); the
    publishing process forgets it when the parts are written (``forget_representatives``)."""
    return pl.read_ipc(path)


def forget_representatives() -> None:
    _representatives.cache_clear()


def gather_part(item: tuple[int, str], job: GatherJob) -> GatheredPart | None:
    """The representatives' rows of the redacted file ``item[1]`` as ``part-<item[0]>``, or
    None when it holds none of them."""
    index, location = item
    reps = _representatives(job.representatives)
    frame = (
        job.work.scan_frame(location)
        .drop([c for c in reps.columns if c != "case_id"], strict=False)
        .unique("case_id", keep="first", maintain_order=True)
        .join(reps.lazy(), on="case_id", how="inner", maintain_order="left")
        .collect()
    )
    if frame.height == 0:
        return None
    corrected = corrected_expected(frame)  # reviewers' corrections (when `expected` exists)
    if corrected is not None:
        frame = frame.with_columns(corrected)
    confirmed = pl.col("_confirmed") if "_confirmed" in frame.columns else None
    frame = frame.with_columns(trust=trust_expr(frame, confirmed)).select(GOLDEN_SCHEMA.names)
    return write_part(frame, Path(job.out_dir) / f"part-{index:05d}.parquet")


def write_part(frame: pl.DataFrame, path: Path) -> GatheredPart:
    """``frame`` (GOLDEN_SCHEMA columns) written at ``path``, with what the caller counts."""
    pq.write_table(to_golden_arrow(frame), path)
    return GatheredPart(path, published_stats(frame), frame.get_column("case_id").to_list())


def without_ids(part: GatheredPart, drop: set[str]) -> GatheredPart | None:
    """``part`` rewritten without the case ids in ``drop`` (published from an earlier file);
    None when nothing is left."""
    frame = pl.read_parquet(part.path).filter(~pl.col("case_id").is_in(sorted(drop)))
    part.path.unlink()
    if frame.height == 0:
        return None
    return write_part(frame, part.path)


def to_golden_arrow(table: pl.DataFrame) -> pa.Table:
    return table.to_arrow().select(GOLDEN_SCHEMA.names).cast(GOLDEN_SCHEMA)
