"""The per-shard redaction task: scrub and verify the cases chosen for publishing.

Runs after quotas and dedup, so Presidio (the slowest step of the pipeline) only works on cases
that will be published. Fail closed: a case that cannot be scrubbed and verified is refused, and
the flow asks dedup for the next member of its cluster instead. Cached by the shard's key, the
chosen ids and the pseudonym key id.

The flow runs a few shards per task (``redact_shards``, groups made by ``group_redact_jobs``):
a shard's redaction takes seconds, and Prefect's own cost of a task run is paid per task. A
group is cached by its shards' keys; each shard also leaves its result next to its files
(``RESULT_FILE``), so a group whose other shards changed takes it from there instead of
redacting that shard again.
"""

from __future__ import annotations

import hashlib
import pickle
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from prefect import task

from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.flows.caching import job_cache_key
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.memory import freeze_loaded_objects, release_memory
from golden_distill.flows.tasks.jobs import (
    RedactGroupJob,
    RedactGroupResult,
    RedactJob,
    RedactResult,
)
from golden_distill.flows.tasks.keys import load_run_keys, run_key
from golden_distill.flows.tasks.shard import check_same_code, outputs_present
from golden_distill.flows.timing import StageClock
from golden_distill.flows.work_folder import Staged, WorkFolder, work_folder
from golden_distill.redaction.inventory import to_nested
from golden_distill.redaction.key_digests import PublishedDigests, RunKeys, needs_redo


def redact_cache_key(
    shard_key: str | None, case_ids: tuple[str, ...], key_id: str | None
) -> str | None:
    """Not keyed by the run's key digests on purpose: a cached redaction of an unchanged shard
    stands when another shard's keys changed, unless it would now decide differently
    (``collision_redo_jobs``)."""
    if shard_key is None:
        return None
    digest = hashlib.sha256(shard_key.encode())
    digest.update((key_id or "-").encode())
    for case_id in case_ids:
        digest.update(b"\x1f" + case_id.encode())
    return digest.hexdigest()


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
    # local: Presidio and spaCy load with the redactor, only in processes that redact
    from golden_distill.redaction.redactor import Redactor

    red = config.redaction
    key = run_key(config, expected_key_id)
    redactor = Redactor.from_config(red, key, config.ingest.volatile_keys)
    freeze_loaded_objects("redactor")  # Presidio and spaCy: ~200k long-lived objects
    return redactor


def redact_candidates(
    candidates: pa.Table,
    config: PipelineConfig,
    quarantine_path: Path,
    key_id: str | None,
    run_keys: RunKeys | None = None,
) -> tuple[pa.Table, dict[str, str], dict[str, Any], PublishedDigests | None]:
    """Scrub and verify every candidate (fail closed). Returns the redacted rows, the ids of
    quarantined candidates with their reason (also appended to the shard's quarantine file),
    counts per entity type / per reason, and the digests of the published pseudonyms."""
    from golden_distill.redaction.shard import redact_table  # local: Presidio, see _redactor

    result = redact_table(candidates, _redactor(config, key_id), run_keys=run_keys)
    with Quarantine(path=quarantine_path) as quarantine:
        for case in result.quarantined:
            quarantine.add(case.to_entry())
    stats = {
        "redaction": {str(k): int(v) for k, v in result.entity_counts.items()},
        "redaction_quarantined": {str(k): int(v) for k, v in result.reasons.items()},
        "field_inventory": to_nested(result.inventory),
        "keys_not_in_run_keys": result.uncovered_keys,
    }
    quarantined = {q.case_id: q.reason for q in result.quarantined}
    return result.table, quarantined, stats, result.published_keys


#: A shard's finished ``RedactResult`` (pickled, as Prefect keeps task results), written into
#: its folder after its files: the folder is named by the shard's cache key, so the result
#: stands for any task that redacts the same cases of the same shard with the same key.
RESULT_FILE = "redact-result.pkl"


def _run(job: RedactJob) -> RedactResult:
    check_same_code(job.pipeline_version, job.label)
    work = work_folder(job.config)
    done = finished_result(job, work)
    if done is not None:
        return done
    with work.staged(job.out_dir) as stage:  # a remote work folder: uploaded at the end
        result = _redact(job, work, stage)
        if job.cache_key is not None:
            saved = stage.path / RESULT_FILE
            saved.touch(mode=0o600)
            saved.write_bytes(pickle.dumps(result))
        return result


def finished_result(job: RedactJob, work: WorkFolder) -> RedactResult | None:
    """The result this job's folder already holds (an earlier task redacted the same cases
    with the same key, and its files are all there), else None."""
    if job.cache_key is None:
        return None
    location = f"{job.out_dir.rstrip('/')}/{RESULT_FILE}"
    if not work.exists(location):
        return None
    result: RedactResult = pickle.loads(work.read_bytes(location))
    if result.cache_key != job.cache_key or not outputs_present(result, work):
        return None
    return replace(result, index=job.index, label=job.label)


def _redact(job: RedactJob, work: WorkFolder, stage: Staged) -> RedactResult:
    started = time.perf_counter()
    out = stage.path
    timed = StageClock(where=job.label).call
    ids = pl.Series(list(job.case_ids), dtype=pl.String)
    chosen = timed(
        "redact",
        lambda: (
            work.scan_frame(job.candidates_path)
            .filter(pl.col("case_id").is_in(ids.implode()))
            .collect()
            .to_arrow()
        ),
    )
    quarantine_path = out / "quarantine.jsonl"
    quarantine_path.touch(mode=0o600)  # present even when empty: cached results check files
    work.make_private(out, [quarantine_path], stop_at=out.parent)
    run_keys = timed("redact", load_run_keys, work, job.run_keys_path)
    redacted, quarantined, stats, published = timed(
        "redact", redact_candidates, chosen, job.config, quarantine_path, job.key_id, run_keys
    )
    redacted_path = out / "redacted.parquet"
    timed("write", pq.write_table, to_golden(redacted), redacted_path)
    stats["redacted"] = redacted.num_rows
    return RedactResult(
        index=job.index,
        label=job.label,
        cache_key=job.cache_key,
        redacted_path=stage.location(redacted_path),
        quarantine_path=stage.location(quarantine_path),
        quarantined=quarantined,
        stats=stats,
        seconds=time.perf_counter() - started,
        published_keys=published,
        run_keys_path=job.run_keys_path,
    )


@task(
    name="redact-shard",
    task_run_name="redact-{job.index}",
    cache_key_fn=job_cache_key,
    persist_result=True,
)
def redact_shard(job: RedactJob) -> RedactResult:
    """Redact one shard's chosen cases; return the file path, refusals and counts."""
    return _run(job)


@task(
    name="redact-shards",
    task_run_name="redact-{job.index}",
    cache_key_fn=job_cache_key,
    persist_result=True,
)
def redact_shards(job: RedactGroupJob) -> RedactGroupResult:
    """Redact a few shards' chosen cases, one after the other, each as ``redact_shard`` would."""
    results = []
    for n, member in enumerate(job.jobs):
        if n:
            release_memory()  # what a task's end gives back (flows/memory.py), between shards
        results.append(_run(member))
    return RedactGroupResult(job.index, job.label, job.cache_key, results)


#: Shards per redaction task, except the last ones of a round (see ``group_redact_jobs``).
REDACT_SHARDS_PER_TASK = 4
#: Tasks of one shard that end a round, per worker: the last tasks decide when the round
#: ends, so they stay short (a worker does not wait long for the other's last group).
SINGLE_SHARD_TASKS_PER_WORKER = 2


def group_key(jobs: tuple[RedactJob, ...]) -> str | None:
    if not jobs or any(job.cache_key is None for job in jobs):
        return None
    digest = hashlib.sha256(b"redact-group")
    for job in jobs:
        digest.update(b"\x1f" + str(job.cache_key).encode())
    return digest.hexdigest()


def group_redact_jobs(jobs: list[RedactJob], workers: int) -> list[RedactGroupJob]:
    """Consecutive jobs in groups of ``REDACT_SHARDS_PER_TASK``, the last
    ``SINGLE_SHARD_TASKS_PER_WORKER`` per worker alone. The same jobs give the same groups
    (and cache keys): a changed shard changes its own group only."""
    singles = min(len(jobs), max(1, workers) * SINGLE_SHARD_TASKS_PER_WORKER)
    grouped = len(jobs) - singles
    chunks = [
        tuple(jobs[i : min(i + REDACT_SHARDS_PER_TASK, grouped)])
        for i in range(0, grouped, REDACT_SHARDS_PER_TASK)
    ]
    chunks += [(job,) for job in jobs[grouped:]]
    out = []
    for chunk in chunks:
        more = f" +{len(chunk) - 1} shard(s)" if len(chunk) > 1 else ""
        out.append(
            RedactGroupJob(
                index=chunk[0].index,
                label=f"{chunk[0].label}{more}",
                jobs=chunk,
                cache_key=group_key(chunk),
                out_dir=chunk[0].out_dir,
            )
        )
    return out


def collision_redo_jobs(
    jobs: list[RedactJob], results: list[RedactResult], run: RunKeys, run_keys_path: str
) -> list[RedactJob]:
    """The jobs that ran before the run's final key digests were known (a later round's
    replacements added originals) and published a pseudonym that is one of them: redone with
    the final digests, under their own cache key and folder. Empty almost always."""
    by_index = {job.index: job for job in jobs}
    out = []
    for result in results:
        if result.published_keys is None or not needs_redo(result.published_keys, run):
            continue
        job = by_index[result.index]
        key = None
        if job.cache_key is not None:
            key = hashlib.sha256(f"{job.cache_key}\x1f{run.fingerprint}".encode()).hexdigest()
        folder = f"redacted-{key[:16]}" if key else f"redacted-{time.time_ns()}-collisions"
        out_dir = WorkFolder.next_to(job.out_dir, folder)
        out.append(replace(job, run_keys_path=run_keys_path, cache_key=key, out_dir=out_dir))
    return out
