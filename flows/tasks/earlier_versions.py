"""What a run reads of the set's earlier versions: the `latest` version's case ids, splits and
field inventory (what the new version continues), whether it was made from exactly this run's
inputs (then nothing is published again), and this version's drift against the pinned one.
Small columns only: a version can be large.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.filters.drift import drift
from golden_distill.filters.splits import sticky_splits
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks.parent import open_version


def parent_case_ids(resolved: ResolvedRun) -> tuple[str | None, set[str] | None]:
    """The `latest` version of the set and its case ids (None, None for a new set).

    Reads only the case_id column of each case file (a version can be large)."""

    parent = open_version(resolved)
    if parent is None:
        return None, None
    ids: set[str] = set()
    for entry in parent.case_files:
        opener = getattr(parent, "_open", None)  # the reader's verified, cached file access
        if opener is None:  # pragma: no cover - reader without it: read the whole table
            return parent.version, set(parent.read_table().column("case_id").to_pylist())
        ids.update(opener(entry).read(columns=["case_id"]).column("case_id").to_pylist())
    return parent.version, ids


#: What the drift (filters/drift.mix) reads of each case: Parquet leaf paths, so a version is read
#: without its request, context and step argument/response text (a small fraction of its bytes).
DRIFT_PATHS = (
    "case_id",
    "steps.list.element.name",
    "steps.list.element.is_mutating",
    "outcome.handoff",
    "outcome.reward",
    "funnels",
    "tenant_id",
    "redaction",
    "split",
    "trust",
)


def _drift_columns(files: Iterable[pq.ParquetFile]) -> pl.DataFrame:
    """The DRIFT_PATHS of every file (those a file has: a version made before splits and trust
    existed lacks them), as one frame."""
    frames = []
    for file in files:
        present = set(file.schema_arrow.names)
        table = file.read(columns=[p for p in DRIFT_PATHS if p.split(".")[0] in present])
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        frames.append(frame)
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def drift_against_pinned(resolved: ResolvedRun, parts: list[Path]) -> dict[str, Any]:
    """Drift of this version against the pinned one (alias `stable`, else `latest`); {} for a
    new set. (The coverage gap is measured on every run against the version itself:
    ``flows/tasks/coverage_step.py``.)

    Only the columns the drift reads are loaded (``DRIFT_PATHS``), so a large set costs a few
    small columns here, not its whole text."""

    pinned = open_version(resolved, "stable")
    if pinned is None:  # (a GoldenSet has a length: an empty one must not read as missing)
        pinned = open_version(resolved, "latest")
    if pinned is None:
        return {}
    before = _drift_columns(pinned._open(e, keep=False) for e in pinned.case_files)
    after = _drift_columns(pq.ParquetFile(p) for p in parts) if parts else before.head(0)
    out: dict[str, Any] = {"pinned": pinned.version, "drift": drift(before, after, top=20)}
    return out


def _frame(table: pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def parent_splits(resolved: ResolvedRun) -> dict[str, str]:
    """case_id -> the split each case of the set's `latest` version belongs in ({} for a new
    set, or a version made before splits existed): its published split, or the one the
    confirmation gate held it out of (the version's decisions table, ``held_from``). What
    keeps a case's split sticky across versions, and moves a confirmed case where it
    belongs."""

    parent = open_version(resolved)
    if parent is None:
        return {}
    opener = getattr(parent, "_open", None)
    out: dict[str, str] = {}
    for entry in parent.case_files:
        if opener is None:  # pragma: no cover - reader without it
            table = parent.read_table()
        else:
            file = opener(entry)
            if "split" not in file.schema_arrow.names:
                return {}
            table = file.read(columns=["case_id", "split"])
        if "split" not in table.column_names:
            return {}
        ids, splits = table.column("case_id").to_pylist(), table.column("split").to_pylist()
        out.update({c: s for c, s in zip(ids, splits, strict=True) if s})
    return sticky_splits(out, _held(parent))


def _held(parent: Any) -> dict[str, str]:
    """case_id -> held_from of the parent's decisions table ({} without one)."""
    decisions = parent.decisions() if hasattr(parent, "decisions") else None
    if decisions is None or "held_from" not in decisions.column_names:
        return {}
    frame = _frame(decisions.select(["case_id", "held_from"])).drop_nulls("held_from")
    return dict(frame.iter_rows())


def parent_field_inventory(resolved: ResolvedRun) -> dict[str, Any] | None:
    """The field inventory recorded by the set's `latest` version (None for a new set)."""

    parent = open_version(resolved)
    if parent is None:
        return None
    return (parent.manifest.get("redaction") or {}).get("fields") or {}


def latest_made_from(
    resolved: ResolvedRun, inputs_sha256: str | None, *, stat: str = "inputs_sha256"
) -> tuple[str, dict] | None:
    """The `latest` version when it was made from exactly these inputs (same shard results,
    selection, key, config and code), with its manifest stats; None otherwise. ``stat`` names
    the manifest stat compared: `inputs_sha256` (in the flow) or `run_key` (before it)."""
    if inputs_sha256 is None:
        return None

    latest = open_version(resolved)
    if latest is None:
        return None
    stats = latest.manifest.get("stats") or {}
    if stats.get(stat) != inputs_sha256:
        return None
    return latest.version, stats


def latest_version(resolved: ResolvedRun) -> str | None:

    latest = open_version(resolved, verify=False)
    return None if latest is None else latest.version


def version_location(resolved: ResolvedRun, version: str) -> str:
    """Where a version's report is, for a store URL or a local folder."""
    base = resolved.store_url.rstrip("/")
    if "://" in base and not base.startswith("file://"):
        return f"{base}/{resolved.set_name}/versions/{version}/report.html"
    root = Path(base.removeprefix("file://")).resolve()
    return str(root / resolved.set_name / "versions" / version / "report.html")
