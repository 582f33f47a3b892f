"""The per-shard redaction task: scrub and verify the cases chosen for publishing.

Runs after quotas and dedup, so Presidio (the slowest step of the pipeline) only works on cases
that will be published. Fail closed: a case that cannot be scrubbed and verified is refused, and
the flow asks dedup for the next member of its cluster instead. Cached by the shard's key, the
chosen ids and the pseudonym key id.

The flow runs a few shards per task (``redact_shards``, groups made by ``group_redact_jobs``):
a shard's redaction takes seconds, and Prefect's own cost of a task run is paid per task. A
group is cached by its shards' keys; each shard also leaves its result next to its files
(``RESULT_FILE``), so a group whose other shards changed takes it from there instead of
redacting that shard again. What a task does is in ``redact_body.py`` (no Prefect there: with a
local process pool it runs in lean helper processes, ``flows/lean_helpers.py``).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace

from prefect import task

from golden_distill.flows.caching import job_cache_key
from golden_distill.flows.lean_helpers import in_helper
from golden_distill.flows.tasks.jobs import (
    RedactGroupJob,
    RedactGroupResult,
    RedactJob,
    RedactResult,
)
from golden_distill.flows.tasks.redact_body import redact_group, redact_one
from golden_distill.flows.work_folder import WorkFolder
from golden_distill.redaction.key_digests import RunKeys, needs_redo


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


@task(
    name="redact-shard",
    task_run_name="redact-{job.index}",
    cache_key_fn=job_cache_key,
    persist_result=True,
)
def redact_shard(job: RedactJob) -> RedactResult:
    """Redact one shard's chosen cases; return the file path, refusals and counts."""
    return in_helper(redact_one, job)


@task(
    name="redact-shards",
    task_run_name="redact-{job.index}",
    cache_key_fn=job_cache_key,
    persist_result=True,
)
def redact_shards(job: RedactGroupJob) -> RedactGroupResult:
    """Redact a few shards' chosen cases, one after the other, each as ``redact_shard`` would;
    in a lean helper process when the flow runs them (``flows/lean_helpers.py``)."""
    return in_helper(redact_group, job)


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
