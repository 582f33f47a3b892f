"""The coverage gap of a run (``filters/coverage.py``), wired: this run's candidates' tool
paths and tasks from the shards' signature files, against the cases of the version it
publishes (its Parquet parts, read a few columns at a time). On every run, windowed or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from golden_distill.datasets.sources.tool_catalogue import load_tool_catalogue
from golden_distill.filters.coverage import coverage_gap, task_of_work_key
from golden_distill.filters.dedup.signature import coverage_keys
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.work_folder import WorkFolder

#: What the covered keys need of a published case (``coverage_keys``: path and task), as
#: Parquet leaf paths: the steps' names, kinds, statuses and write flags, never their
#: arguments and responses (most of a version's bytes).
CASE_COLUMNS = [
    "case_id",
    "trace_id",
    "tenant_id",
    "intent",
    "outcome",
    "source",
    "expected",
    "steps.list.element.kind",
    "steps.list.element.name",
    "steps.list.element.status",
    "steps.list.element.is_mutating",
]


def run_coverage_gap(
    signature_paths: list[str], parts: list[Path], config: PipelineConfig, work: WorkFolder
) -> dict[str, Any]:
    """The gap between this run's candidates (``signature_paths``) and the version's cases
    (``parts``)."""
    frames = [
        work.read_frame(p, ["case_id", "path_key", "trajectory", "work_key"])
        for p in signature_paths
    ]
    traffic = (
        pl.concat(frames, how="vertical_relaxed")
        .unique("case_id", keep="first")
        .with_columns(task_key=task_of_work_key(pl.col("work_key")))
        if frames
        else pl.DataFrame(
            schema={c: pl.String for c in ("case_id", "path_key", "trajectory", "task_key")}
        )
    )
    covered = []
    for part in parts:
        file = pq.ParquetFile(part)
        names = set(file.schema_arrow.names)
        columns = [c for c in CASE_COLUMNS if c.split(".")[0] in names]
        table = pl.from_arrow(file.read(columns=columns))
        assert isinstance(table, pl.DataFrame)
        covered.append(coverage_keys(table, config.dedup).select("path_key", "task_key", "tools"))
    keys = (
        pl.concat(covered, how="vertical_relaxed")
        if covered
        else pl.DataFrame(
            schema={"path_key": pl.String, "task_key": pl.String, "tools": pl.List(pl.String)}
        )
    )
    known = set(load_tool_catalogue(config.ingest.tool_catalogues).tools)
    return coverage_gap(traffic, keys, known)
