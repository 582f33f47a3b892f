"""The per-shard redaction task: scrub and verify the cases chosen for publishing.

Runs after quotas and dedup, so Presidio (the slowest step of the pipeline) only works on cases
that will be published. Fail closed: a case that cannot be scrubbed and verified is refused, and
the flow asks dedup for the next member of its cluster instead. Cached by the shard's key, the
chosen ids and the pseudonym key id.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
from prefect import task

from golden_distill.flows.tasks import shard_steps
from golden_distill.flows.tasks.jobs import RedactJob, RedactResult
from golden_distill.flows.tasks.shard import check_same_code, fresh_dir, stage_timer
from golden_distill.flows.workdir import make_private


def redact_cache_key(
    shard_key: str | None, case_ids: tuple[str, ...], key_id: str | None
) -> str | None:
    if shard_key is None:
        return None
    digest = hashlib.sha256(shard_key.encode())
    digest.update((key_id or "-").encode())
    for case_id in case_ids:
        digest.update(b"\x1f" + case_id.encode())
    return digest.hexdigest()


def redact_task_cache_key(context: object, parameters: dict) -> str | None:
    return parameters["job"].cache_key


def _run(job: RedactJob) -> RedactResult:
    check_same_code(job.pipeline_version, job.label)
    started = time.perf_counter()
    out = fresh_dir(Path(job.out_dir))
    seconds: dict[str, float] = {}
    timed = stage_timer(job.label, seconds)
    ids = pl.Series(list(job.case_ids), dtype=pl.String)
    chosen = timed(
        "redact",
        lambda: (
            pl.scan_parquet(job.candidates_path)
            .filter(pl.col("case_id").is_in(ids.implode()))
            .collect()
            .to_arrow()
        ),
    )
    quarantine_path = out / "quarantine.jsonl"
    quarantine_path.touch(mode=0o600)  # present even when empty: cached results check files
    make_private(out, [quarantine_path], stop_at=out.parent)
    redacted, quarantined, stats = timed(
        "redact", shard_steps.redact_candidates, chosen, job.config, quarantine_path, job.key_id
    )
    redacted_path = out / "redacted.parquet"
    timed("write", pq.write_table, shard_steps.to_golden(redacted), redacted_path)
    stats["redacted"] = redacted.num_rows
    return RedactResult(
        index=job.index,
        label=job.label,
        cache_key=job.cache_key,
        redacted_path=str(redacted_path),
        quarantine_path=str(quarantine_path),
        quarantined=quarantined,
        stats=stats,
        seconds=time.perf_counter() - started,
    )


@task(
    name="redact-shard",
    task_run_name="redact-{job.index}",
    cache_key_fn=redact_task_cache_key,
    persist_result=True,
)
def redact_shard(job: RedactJob) -> RedactResult:
    """Redact one shard's chosen cases; return the file path, refusals and counts."""
    return _run(job)
