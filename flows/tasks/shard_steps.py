"""The per-shard steps, each a thin call into the library that owns the decision.

Shard task: read (datasets.ingest) -> time window -> funnel scores (filters) -> dedup signatures
(filters.dedup). Redact task: redact (redaction) the chosen cases. Each step returns a table
plus counts; nothing here decides what a case is worth.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.schema import CASE_SCHEMA, GOLDEN_SCHEMA
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.tasks.jobs import ShardJob


def read_shard(job: ShardJob, canonical_dir: Path) -> tuple[pa.Table, dict[str, Any]]:
    """Ingest one source into canonical Parquet under ``canonical_dir`` and load it."""
    from golden_distill.datasets.ingest import ingest

    summary = ingest(
        [job.shard.uri], canonical_dir, fmt=job.source_format, config=job.config.ingest
    )
    failed = [s for s in summary.sources if s.error]
    if failed:
        # The whole input is unusable (missing, unreadable, unknown format): the run stops here
        # and names it; the other shards stay cached for the rerun after the fix.
        raise ShardUnreadable(f"{failed[0].uri}: {failed[0].error}")
    tables = [pq.read_table(p, schema=CASE_SCHEMA) for p in summary.shards]
    table = pa.concat_tables(tables) if tables else CASE_SCHEMA.empty_table()
    stats = {
        "records_read": int(summary.records_read),
        "cases_read": int(table.num_rows),
        "quarantined": {str(k): int(v) for k, v in dict(summary.quarantined).items()},
        "bytes_read": int(summary.bytes_read),
    }
    return table, stats


class ShardUnreadable(RuntimeError):
    """A shard's input could not be read at all (the message names it, never its content)."""


def move_quarantine(canonical_dir: Path, target: Path) -> int:
    """Keep the shard's quarantine file (it may hold raw lines) next to its outputs."""
    source = canonical_dir / "quarantine.jsonl"
    if source.exists():
        shutil.move(str(source), target)
    else:
        target.touch()
    return len(read_quarantine(target))


def apply_window(table: pa.Table, since: str | None, until: str | None) -> pa.Table:
    """Keep runs recorded in ``[since, until)``; runs without a timestamp stay only when no
    window is set (they cannot be placed in one)."""
    if since is None and until is None:
        return table
    ts = table.column("recorded_at")
    mask = pc.is_valid(ts)
    if since is not None:
        mask = pc.and_(
            mask, pc.greater_equal(ts, pa.scalar(datetime.fromisoformat(since), ts.type))
        )
    if until is not None:
        mask = pc.and_(mask, pc.less(ts, pa.scalar(datetime.fromisoformat(until), ts.type)))
    return table.filter(pc.fill_null(mask, False))


#: Decision columns kept per case for the global quota step (small: no reasons, no tool lists).
DECISION_COLUMNS = (
    "case_id",
    "tenant_id",
    "signature",
    "value_score",
    "funnels",
    "candidate",
    "status",
    "funnel_reasons",
    "n_steps",
)


def score_funnels(
    table: pa.Table, config: PipelineConfig
) -> tuple[pa.Table, pl.DataFrame, dict[str, Any]]:
    """Every funnel over the shard (no quotas: they are global). Returns the candidates' full
    rows with funnels, funnel_reasons and value_score; the small per-case decisions; counts."""
    from golden_distill.filters.runner import needs_rescore, permissive_figures, score_cases

    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    # Batch-wide figures (a percentile of the whole batch) are not known per shard: a funnel
    # that uses one is scored permissively here, its rows kept, and re-scored globally.
    permissive = permissive_figures(config.funnels)
    scored = score_cases(frame, config.funnels, figures=permissive)
    keep = [c for c in scored.columns if c in DECISION_COLUMNS or c.startswith("in_")]
    decisions = scored.select(keep)
    kept = needs_rescore(scored) if permissive else pl.col("candidate")
    chosen = scored.filter(kept).select("case_id", "funnels", "funnel_reasons", "value_score")
    candidates = frame.join(chosen, on="case_id", how="inner", maintain_order="left")
    stats = {"scored": scored.height, "funnel_candidates": int(scored["candidate"].sum())}
    return candidates.to_arrow(), decisions, stats


def dedup_signatures(redacted: pa.Table, config: PipelineConfig) -> pa.Table:
    from golden_distill.filters.dedup.signature import signatures

    frame = pl.from_arrow(redacted)
    assert isinstance(frame, pl.DataFrame)
    return signatures(frame, config.dedup).to_arrow()


def to_golden(table: pa.Table) -> pa.Table:
    """Conform to GOLDEN_SCHEMA: pipeline columns not filled yet (clusters) are null."""
    columns = []
    for fld in GOLDEN_SCHEMA:
        if fld.name in table.column_names:
            columns.append(table.column(fld.name).cast(fld.type))
        else:
            columns.append(pa.nulls(table.num_rows, fld.type))
    return pa.Table.from_arrays(columns, schema=GOLDEN_SCHEMA)


def _redactor(config: PipelineConfig, expected_key_id: str | None) -> Any:
    """A fresh Redactor per task: its output for a shard must not depend on which shards the
    same worker process redacted before (cheap: the analyzer's heavy parts are shared)."""
    from golden_distill.redaction.keys import resolve_key
    from golden_distill.redaction.redactor import Redactor

    red = config.redaction
    key = resolve_key(secret_block=red.key_secret_block, local_key_file=red.local_key_file).key
    if expected_key_id is not None and key.key_id != expected_key_id:
        # A worker with another key would publish pseudonyms inconsistent with the rest.
        raise RuntimeError(
            f"this worker's pseudonym key is {key.key_id}, the run's is {expected_key_id}"
        )
    return Redactor.from_config(red, key, config.ingest.volatile_keys)


def redact_candidates(
    candidates: pa.Table, config: PipelineConfig, quarantine_path: Path, key_id: str | None
) -> tuple[pa.Table, dict[str, str], dict[str, Any]]:
    """Scrub and verify every candidate (fail closed). Returns the redacted rows, the ids of
    quarantined candidates with their reason (also appended to the shard's quarantine file),
    and counts per entity type / per reason."""
    from golden_distill.datasets.quarantine import Quarantine
    from golden_distill.redaction.shard import redact_table

    result = redact_table(candidates, _redactor(config, key_id))
    with Quarantine(path=quarantine_path) as quarantine:
        for case in result.quarantined:
            quarantine.add(case.to_entry())
    stats = {
        "redaction": {str(k): int(v) for k, v in result.entity_counts.items()},
        "redaction_quarantined": {str(k): int(v) for k, v in result.reasons.items()},
    }
    return result.table, {q.case_id: q.reason for q in result.quarantined}, stats
