"""The key pass: digests of every original key of the chosen cases, before any is redacted.

One small task per shard (structural scan only, no Presidio) so the run-wide pseudonym
collision check (``redaction/key_digests.py``) is settled before redaction: the flow merges the
shards' digests into one ``RunKeys`` file in the work folder and every redaction task loads it,
so no redaction runs twice. Cached by the shard's key, the chosen ids and the pseudonym key id.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from prefect import task

from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.tasks.shard import check_same_code
from golden_distill.flows.timing import StageClock
from golden_distill.flows.work_folder import WorkFolder, work_folder
from golden_distill.redaction.key_digests import KeyDigests, RunKeys
from golden_distill.redaction.key_scan import KeyScanner
from golden_distill.redaction.keys import PseudonymKey, PseudonymKeyError, resolve_key

#: Folder of the work folder holding each run's merged key digests (named by content).
RUN_KEYS_FOLDER = "run-keys"


@dataclass(frozen=True)
class KeysJob:
    """List the original keys of one shard's chosen cases."""

    index: int
    label: str
    candidates_path: str  # the shard's unredacted candidates (work dir)
    case_ids: tuple[str, ...]  # chosen cases of this shard, sorted
    config: PipelineConfig
    out_dir: str  # only holds the local engine's cached result
    cache_key: str | None
    key_id: str | None = None
    pipeline_version: str = ""


@dataclass
class KeysResult:
    index: int
    label: str
    cache_key: str | None
    digests: KeyDigests  # keyed digests only: no raw key leaves the task
    cases: int = 0
    seconds: float = 0.0


def keys_cache_key(redact_key: str | None) -> str | None:
    """The key pass of a redaction job's cases (same inputs, another task)."""
    if redact_key is None:
        return None
    return hashlib.sha256(f"keys\x1f{redact_key}".encode()).hexdigest()


def keys_task_cache_key(context: object, parameters: dict) -> str | None:
    return parameters["job"].cache_key


def run_key(config: PipelineConfig, expected_key_id: str | None) -> PseudonymKey:
    """This worker's pseudonym key, refused unless it is the run's: a worker with another key
    would publish pseudonyms (or list digests) inconsistent with the rest. Ids only in the
    message (never key material)."""
    red = config.redaction
    key = resolve_key(secret_block=red.key_secret_block, local_key_file=red.local_key_file).key
    if expected_key_id is not None and key.key_id != expected_key_id:
        raise PseudonymKeyError(
            f"this worker's pseudonym key is {key.key_id}, the run's is {expected_key_id}"
        )
    return key


def _run(job: KeysJob) -> KeysResult:
    check_same_code(job.pipeline_version, job.label)
    started = time.perf_counter()
    scanner = KeyScanner(job.config.redaction, run_key(job.config, job.key_id).secret)
    ids = pl.Series(list(job.case_ids), dtype=pl.String)

    def chosen() -> list[dict]:  # rows as the redaction task sees them (arrow -> python)
        frame = work_folder(job.config).scan_frame(job.candidates_path)
        return frame.filter(pl.col("case_id").is_in(ids.implode())).collect().to_arrow().to_pylist()

    clock = StageClock(where=job.label)
    rows = clock.call("keys", chosen)
    digests = clock.call("keys", scanner.digests, rows)
    return KeysResult(
        index=job.index,
        label=job.label,
        cache_key=job.cache_key,
        digests=digests,
        cases=len(rows),
        seconds=time.perf_counter() - started,
    )


@task(
    name="collect-keys",
    task_run_name="keys-{job.index}",
    cache_key_fn=keys_task_cache_key,
    persist_result=True,
)
def collect_keys(job: KeysJob) -> KeysResult:
    """Keyed digests of the original keys of one shard's chosen cases."""
    return _run(job)


def save_run_keys(work: WorkFolder, run: RunKeys) -> str:
    """Write the run's merged digests once (named by content); the location redaction loads."""
    location = work.join(RUN_KEYS_FOLDER, f"{run.fingerprint[:32]}.npz")
    if not work.exists(location):
        work.write_bytes(location, run.to_bytes())
        if work.is_local:  # keyed digests, not raw keys: private all the same
            work.make_private(Path(location).parent, [Path(location)])
    return location


def load_run_keys(work: WorkFolder, location: str | None) -> RunKeys | None:
    return RunKeys.from_bytes(work.read_bytes(location)) if location else None


def prune_run_keys(work: WorkFolder, keep: set[str]) -> int:
    """Remove earlier runs' key digests (``keep``: the locations this run's results use)."""
    folder = work.join(RUN_KEYS_FOLDER)
    names = {WorkFolder.name(location) for location in keep}
    removed = 0
    for name in work.list_names(folder):
        if name not in names:
            work.remove_file(f"{folder}/{name}")
            removed += 1
    return removed
