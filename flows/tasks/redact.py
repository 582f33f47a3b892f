"""The per-shard redaction task: scrub and verify the cases chosen for publishing.

Runs after quotas and dedup, so Presidio (the slowest step of the pipeline) only works on cases
that will be published. Fail closed: a case that cannot be scrubbed and verified is refused, and
the flow asks dedup for the next member of its cluster instead. Cached by the shard's key, the
chosen ids and the pseudonym key id.
"""

from __future__ import annotations

import hashlib
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
from golden_distill.flows.tasks.jobs import RedactJob, RedactResult
from golden_distill.flows.tasks.keys import load_run_keys, run_key
from golden_distill.flows.tasks.shard import check_same_code
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
    return Redactor.from_config(red, key, config.ingest.volatile_keys)


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


def _run(job: RedactJob) -> RedactResult:
    check_same_code(job.pipeline_version, job.label)
    work = work_folder(job.config)
    with work.staged(job.out_dir) as stage:  # a remote work folder: uploaded at the end
        return _redact(job, work, stage)


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
