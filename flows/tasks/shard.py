"""The per-shard task: one source file in, funnel candidates + decisions + signatures out (paths).

Coarse on purpose (Prefect costs ~15-20 ms per task run): one task does read -> window ->
funnels -> dedup signatures for a whole shard, and passes files, never DataFrames. Its result
is cached under a key of the shard's content, the config and the pipeline version (see
flows/caching.py), so a rerun over unchanged inputs skips the work entirely. Redaction is a
second per-shard task (tasks/redact.py) that only sees the cases quotas and dedup chose.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from prefect import task

from golden_distill.flows.caching import pipeline_version, shard_task_cache_key
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.tasks import shard_steps
from golden_distill.flows.tasks.jobs import ShardJob, ShardResult


def check_same_code(expected: str, label: str) -> None:
    """A worker (Dask, process pool) running other code than the flow would file its results
    under the wrong cache key and mix two pipeline versions in one golden set."""
    here = pipeline_version()
    if expected and here != expected:
        raise StageError(
            "shard",
            f"shard {label}: this worker runs pipeline {here}, the flow {expected}; "
            "deploy the same code to every worker",
        )


def stage_timer(label: str, seconds: dict[str, float]) -> Callable[..., Any]:
    """``timed(stage, fn, *args)``: run a step, add its time to ``seconds[stage]``, and turn a
    failure into a StageError naming the stage and the shard."""

    def timed(stage: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except StageError:
            raise
        except Exception as exc:
            raise StageError(stage, f"shard {label}: {describe(exc)}") from None
        finally:
            seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - start

    return timed


def fresh_dir(path: Path) -> Path:
    """An empty folder (leftovers of an interrupted attempt are removed)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def _run(job: ShardJob) -> ShardResult:
    check_same_code(job.pipeline_version, job.shard.label)
    out = fresh_dir(Path(job.out_dir))
    canonical = out / "canonical"
    seconds: dict[str, float] = {}
    timed = stage_timer(job.shard.label, seconds)

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
    stats["candidates"] = funnel_stats["funnel_candidates"]
    sigs = timed("dedup", shard_steps.dedup_signatures, candidates, job.config)

    candidates_path = out / "candidates.parquet"
    decisions_path = out / "decisions.parquet"
    signatures_path = out / "signatures.parquet"
    timed("write", pq.write_table, candidates, candidates_path)
    timed("write", decisions.write_parquet, decisions_path)
    timed("write", pq.write_table, sigs, signatures_path)
    # The canonical copy of the whole shard is not needed again: only candidates are kept.
    shutil.rmtree(canonical, ignore_errors=True)
    return ShardResult(
        index=job.index,
        label=job.shard.label,
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
    """Read one shard, score every funnel, sign the candidates; return file paths and counts."""
    return _run(job)


def outputs_present(result: Any) -> bool:
    """A cached result is only usable while the files it names still exist."""
    names = ("candidates_path", "quarantine_path", "decisions_path", "signatures_path",
             "redacted_path")  # fmt: skip
    paths = [getattr(result, n) for n in names if getattr(result, n, None)]
    return all(Path(p).exists() for p in paths)
