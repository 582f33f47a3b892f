"""What a redaction task does, importable without Prefect: read a shard's chosen cases, scrub
and verify them (fail closed), write the redacted rows and the refusals.

Without Prefect on purpose: with a local process pool, the redaction tasks (flows/tasks/
redact.py) run on the flow's threads and hand this body to lean helper processes
(``flows/lean_helpers.py``), which then carry only Presidio, pyarrow and polars, not Prefect's
runtime (~0.1 GB per process, in the phase where the run's memory peaks).
"""

from __future__ import annotations

import pickle
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.memory import freeze_loaded_objects, release_memory
from golden_distill.flows.tasks.jobs import (
    RedactGroupJob,
    RedactGroupResult,
    RedactJob,
    RedactResult,
)
from golden_distill.flows.tasks.keys_body import load_known_bases
from golden_distill.flows.tasks.task_guards import check_same_code, outputs_present, run_key
from golden_distill.flows.timing import StageClock
from golden_distill.flows.work_folder import Staged, WorkFolder, work_folder
from golden_distill.redaction.inventory import to_nested
from golden_distill.redaction.key_digests import PublishedDigests, RunKeys
from golden_distill.redaction.known_bases import KnownBases
from golden_distill.redaction.process_caches import forget_values


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
    known_bases: KnownBases | None = None,
) -> tuple[pa.Table, dict[str, str], dict[str, Any], PublishedDigests | None]:
    """Scrub and verify every candidate (fail closed). Returns the redacted rows, the ids of
    quarantined candidates with their reason (also appended to the shard's quarantine file),
    counts per entity type / per reason, and the digests of the published pseudonyms.
    ``known_bases``: the base pseudonyms the key pass computed for these cases (optional)."""
    from golden_distill.redaction.shard import redact_table  # local: Presidio, see _redactor

    result = redact_table(
        candidates, _redactor(config, key_id), run_keys=run_keys, known_bases=known_bases
    )
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


def redact_one(job: RedactJob) -> RedactResult:
    """One shard's chosen cases (or the result its folder already holds)."""
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
    chosen = timed("redact", work.read_cases, job.candidates_path, job.case_ids)
    quarantine_path = out / "quarantine.jsonl"
    quarantine_path.touch(mode=0o600)  # present even when empty: cached results check files
    work.make_private(out, [quarantine_path], stop_at=out.parent)
    run_keys = timed("redact", load_run_keys, work, job.run_keys_path)
    known = timed("redact", load_known_bases, work, job.known_bases_path) if run_keys else None
    redacted, quarantined, stats, published = timed(
        "redact",
        redact_candidates,
        chosen,
        job.config,
        quarantine_path,
        job.key_id,
        run_keys,
        known,
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


def load_run_keys(work: WorkFolder, location: str | None) -> RunKeys | None:
    """The run's merged key digests (flows/tasks/keys.py ``save_run_keys``), if the job has any."""
    return RunKeys.from_bytes(work.read_bytes(location)) if location else None


def redact_group(job: RedactGroupJob) -> RedactGroupResult:
    """A few shards' chosen cases, one after the other, each as a one-shard task would."""
    results = []
    for n, member in enumerate(job.jobs):
        if n:  # what a task's end does, between shards: no value a shard saw is kept for the
            forget_values()  # next (redaction/process_caches.py), and memory is given back
            release_memory()
        results.append(redact_one(member))
    return RedactGroupResult(job.index, job.label, job.cache_key, results)
