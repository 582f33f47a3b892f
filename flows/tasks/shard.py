"""The per-shard task: one source file in, redacted candidates + dedup signatures out (paths).

Coarse on purpose (Prefect costs ~15-20 ms per task run): one task does read -> window ->
funnels -> redact -> signatures for a whole shard, and passes files, never DataFrames. Its result
is cached under a key of the shard's content, the config, the key id and the pipeline version
(see flows/caching.py), so a rerun over unchanged inputs skips the work entirely.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pyarrow.parquet as pq
from prefect import task

from golden_distill.flows.caching import shard_task_cache_key
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.tasks import shard_steps
from golden_distill.flows.tasks.jobs import ShardJob, ShardResult


def _run(job: ShardJob) -> ShardResult:
    out = Path(job.out_dir)
    if out.exists():  # leftovers of an interrupted attempt: start clean
        shutil.rmtree(out)
    out.mkdir(parents=True)
    canonical = out / "canonical"
    seconds: dict[str, float] = {}
    label = job.shard.label

    def timed(stage: str, fn, *args):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return fn(*args)
        except StageError:
            raise
        except Exception as exc:
            raise StageError(stage, f"shard {label}: {describe(exc)}") from exc
        finally:
            seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - start

    table, stats = timed("read", shard_steps.read_shard, job, canonical)
    quarantine_path = out / "quarantine.jsonl"
    timed("read", shard_steps.move_quarantine, canonical, quarantine_path)
    table = timed("read", shard_steps.apply_window, table, job.since, job.until)
    stats["in_window"] = table.num_rows

    candidates, decisions, funnel_stats = timed(
        "funnels", shard_steps.score_funnels, table, job.config
    )
    del table
    stats.update(funnel_stats)
    redacted, quarantined, redaction_stats = timed(
        "redact",
        shard_steps.redact_candidates,
        candidates,
        job.config,
        quarantine_path,
        job.key_id,
    )
    del candidates
    stats.update(redaction_stats)
    decisions = shard_steps.mark_quarantined(decisions, quarantined)
    stats["candidates"] = redacted.num_rows

    candidates_path = out / "candidates.parquet"
    decisions_path = out / "decisions.parquet"
    signatures_path = out / "signatures.parquet"
    sigs = timed("dedup", shard_steps.dedup_signatures, redacted, job.config)
    timed("write", pq.write_table, shard_steps.to_golden(redacted), candidates_path)
    timed("write", decisions.write_parquet, decisions_path)
    timed("write", pq.write_table, sigs, signatures_path)
    # Canonical shards hold unredacted records: they do not outlive the task.
    shutil.rmtree(canonical, ignore_errors=True)
    return ShardResult(
        index=job.index,
        label=label,
        cache_key=job.cache_key,
        candidates_path=str(candidates_path),
        signatures_path=str(signatures_path),
        decisions_path=str(decisions_path),
        quarantine_path=str(quarantine_path),
        stats=stats,
        seconds=seconds,
    )


@task(
    name="process-shard",
    task_run_name="shard-{job.index}",
    cache_key_fn=shard_task_cache_key,
    persist_result=True,
)
def process_shard(job: ShardJob) -> ShardResult:
    """Read, select, redact and sign one shard; return file paths and counts."""
    return _run(job)


def outputs_present(result: ShardResult) -> bool:
    """A cached result is only usable while the files it names still exist."""
    paths = [
        result.candidates_path,
        result.quarantine_path,
        result.decisions_path,
        result.signatures_path,
    ]
    return all(Path(p).exists() for p in paths)
