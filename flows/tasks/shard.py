"""The per-shard task: one source file in, funnel candidates + decisions + signatures out (paths).

Coarse on purpose (Prefect costs ~15-20 ms per task run): one task does read -> window ->
funnels -> dedup signatures for a whole shard, and passes files, never DataFrames. Its result
is cached under a key of the shard's content, the config and the pipeline version (see
flows/caching.py), so a rerun over unchanged inputs skips the work entirely. Redaction is a
second per-shard task (tasks/redact.py) that only sees the cases quotas and dedup chose.
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
from prefect import task

from golden_distill.datasets.case_identity import identity_frame
from golden_distill.datasets.ingest import ingest_table
from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.filters.dedup.signature import signatures, task_id_expr
from golden_distill.filters.runner import needs_rescore, permissive_figures, score_cases
from golden_distill.flows.caching import job_cache_key
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.memory import freeze_loaded_objects
from golden_distill.flows.tasks.jobs import ShardJob, ShardResult
from golden_distill.flows.tasks.task_guards import check_same_code
from golden_distill.flows.timing import StageClock
from golden_distill.flows.work_folder import Staged, WorkFolder, work_folder


def read_shard(job: ShardJob, canonical_dir: Path) -> tuple[pa.Table, dict[str, Any]]:
    """Ingest one source into an Arrow table (its quarantine and summary under
    ``canonical_dir``): read straight into memory, as the steps after it need it whole."""
    shard = job.shard
    table, summary = ingest_table(
        [shard.uri],
        canonical_dir,
        fmt=job.source_format,
        config=job.config.ingest,
        names={shard.uri: shard.name} if shard.name else None,
    )
    failed = [s for s in summary.sources if s.error]
    if failed:
        # The whole input is unusable (missing, unreadable, unknown format, or stopped after a
        # run of unreadable records): the run stops here and names it; the other shards stay
        # cached for the rerun after the fix.
        error = failed[0].error or ""
        raise ShardUnreadable(error if failed[0].uri in error else f"{failed[0].uri}: {error}")
    stats = {
        "records_read": int(summary.records_read),
        "cases_read": int(table.num_rows),
        "quarantined": {str(k): int(v) for k, v in dict(summary.quarantined).items()},
        "bytes_read": int(summary.bytes_read),
    }
    hints = [[s.uri, s.hint] for s in summary.sources if s.hint]
    if hints:  # no case read: the format it looks like (the run checks the total)
        stats["format_hints"] = hints
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


def write_identities(table: pa.Table, path: Path) -> None:
    """The shard's identity frame (``datasets/case_identity.py``): ids, digests, places."""
    identity_frame(table).write_parquet(path)


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
    # the source's task id, kept for the published set (redaction pseudonymises it as a key)
    candidates = candidates.with_columns(task_id=task_id_expr(candidates, config.dedup))
    stats = {"scored": scored.height, "funnel_candidates": int(scored["candidate"].sum())}
    return candidates.to_arrow(), decisions, stats


def dedup_signatures(candidates: pa.Table, config: PipelineConfig) -> pa.Table:
    """Dedup signatures of a shard's funnel candidates. They are NOT redacted yet: redaction runs
    after dedup, on the chosen representatives only, so signatures stay in the work folder."""
    frame = pl.from_arrow(candidates)
    assert isinstance(frame, pl.DataFrame)
    return signatures(frame, config.dedup).to_arrow()


def _run(job: ShardJob) -> ShardResult:
    check_same_code(job.pipeline_version, job.shard.label)
    freeze_loaded_objects("shard step")  # the modules a shard worker runs: not collected
    work = work_folder(job.config)
    with work.staged(job.out_dir) as stage:  # a remote work folder: uploaded at the end
        return _process(job, work, stage)


def _process(job: ShardJob, work: WorkFolder, stage: Staged) -> ShardResult:
    out = stage.path
    canonical = out / "canonical"
    clock = StageClock(where=job.shard.label)
    timed = clock.call

    table, stats = timed("read", read_shard, job, canonical)
    quarantine_path = out / "quarantine.jsonl"
    timed("read", move_quarantine, canonical, quarantine_path)
    # every record read, before the window: the run checks one id means one record
    identities_path = out / "identities.parquet"
    timed("read", write_identities, table, identities_path)
    table = timed("read", apply_window, table, job.since, job.until)
    stats["in_window"] = table.num_rows

    candidates, decisions, funnel_stats = timed("funnels", score_funnels, table, job.config)
    del table
    stats.update(funnel_stats)
    stats["candidates"] = funnel_stats["funnel_candidates"]
    sigs = timed("dedup", dedup_signatures, candidates, job.config)

    candidates_path = out / "candidates.parquet"
    decisions_path = out / "decisions.parquet"
    signatures_path = out / "signatures.parquet"
    timed("write", pq.write_table, candidates, candidates_path)
    timed("write", decisions.write_parquet, decisions_path)
    timed("write", pq.write_table, sigs, signatures_path)
    paths = [candidates_path, decisions_path, signatures_path, quarantine_path, identities_path]
    work.make_private(out, paths, stop_at=out.parent.parent)
    # The ingest's folder (its summary; the quarantine was moved) is not needed again.
    shutil.rmtree(canonical, ignore_errors=True)
    return ShardResult(
        index=job.index,
        label=job.shard.label,
        cache_key=job.cache_key,
        candidates_path=stage.location(candidates_path),
        signatures_path=stage.location(signatures_path),
        decisions_path=stage.location(decisions_path),
        quarantine_path=stage.location(quarantine_path),
        identities_path=stage.location(identities_path),
        stats=stats,
        seconds=clock.seconds,
    )


@task(
    name="process-shard",
    task_run_name="shard-{job.index}",
    cache_key_fn=job_cache_key,
    persist_result=True,
)
def process_shard(job: ShardJob) -> ShardResult:
    """Read one shard, score every funnel, sign the candidates; return file paths and counts."""
    return _run(job)
