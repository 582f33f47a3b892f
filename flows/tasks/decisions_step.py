"""The version's decisions table (``filters/decision_table.py``), wired: the inputs are read from
the shard decisions files, the selection and the redaction results, and the table goes to a
local Parquet file that ``publish_version`` puts in the version (``decisions.parquet``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from golden_distill.filters.decision_table import decision_table

#: What the table reads of each shard's decisions file (small columns: no reasons' text).
READ_COLUMNS = ["case_id", "status", "funnels", "value_score"]


def write_decisions_file(
    job: Any, published: set[str], folder: Path, held: set[str] | None = None
) -> Path:
    """``decisions.parquet`` in ``folder`` for ``job`` (a ``PublishJob``) whose version holds
    the case ids ``published``; ``held``: those the confirmation gate holds out of
    regression."""
    selection, work = job.selection, job.resolved.work
    read = pl.concat(
        [work.read_frame(r.decisions_path, READ_COLUMNS).lazy() for r in job.results]
        or [pl.LazyFrame(schema={c: pl.String for c in READ_COLUMNS[:2]})],
        how="diagonal_relaxed",
    )
    if "funnels" not in read.collect_schema():
        read = read.with_columns(
            funnels=pl.lit(None, dtype=pl.List(pl.String)), value_score=pl.lit(None, pl.Float64)
        )
    final = selection.final_status
    if final is None and selection.decisions is not None:  # no choice since the select step
        final = selection.decisions.read(["case_id", "status"])
    membership = []
    if selection.clusters is not None:
        membership.append(selection.clusters.read(["case_id", "cluster_id"]))
    if selection.carried_clusters is not None:
        membership.append(selection.carried_clusters.select("case_id", "cluster_id"))
    refused = {cid: why for r in job.redacted for cid, why in (r.quarantined or {}).items()}
    growth = selection.growth
    table = decision_table(
        read,
        final=final,
        membership=pl.concat(membership, how="vertical_relaxed") if membership else None,
        published=published,
        refused=refused,
        rejected=selection.rejected,
        carried=None if growth is None else growth.carried_rows,
        left=selection.left,
        held=held,
    )
    path = folder / "decisions.parquet"
    table.write_parquet(path)
    return path
