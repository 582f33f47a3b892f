"""The key pass: digests of every original key of the chosen cases, before any is redacted.

A structural scan only (no Presidio), so the run-wide pseudonym collision check
(``redaction/key_digests.py``) is settled before redaction: the flow merges the digests into
one ``RunKeys`` file in the work folder and every redaction task loads it, so no redaction runs
twice. A shard's key pass takes about a second, less than Prefect's own cost of a task run, so
the shards are grouped into a few tasks (``KEY_PASS_TASKS_PER_WORKER`` per worker). Cached by
each part's shard key, chosen ids and the pseudonym key id.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from prefect import task

from golden_distill.flows.caching import job_cache_key
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.tasks.task_guards import check_same_code, run_key
from golden_distill.flows.timing import StageClock
from golden_distill.flows.work_folder import WorkFolder, work_folder
from golden_distill.redaction.key_digests import KeyDigests, RunKeys

#: Folder of the work folder holding each run's merged key digests (named by content).
RUN_KEYS_FOLDER = "run-keys"


#: Key-pass tasks per worker: enough to keep every worker busy to the end, few enough that
#: Prefect's per-task cost stays small next to the work.
KEY_PASS_TASKS_PER_WORKER = 2


@dataclass(frozen=True)
class KeysPart:
    """One shard's chosen cases."""

    label: str
    candidates_path: str  # the shard's unredacted candidates (work dir)
    case_ids: tuple[str, ...]  # chosen cases of this shard, sorted
    cache_key: str | None  # the shard's redaction key (shard, chosen ids, key id)


@dataclass(frozen=True)
class KeysJob:
    """List the original keys of the chosen cases of a few shards."""

    index: int
    label: str
    parts: tuple[KeysPart, ...]
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


def keys_cache_key(parts: tuple[KeysPart, ...]) -> str | None:
    """The key pass of these parts (their redaction keys: same inputs, another task)."""
    if not parts or any(part.cache_key is None for part in parts):
        return None
    digest = hashlib.sha256(b"keys")
    for part in parts:
        digest.update(b"\x1f" + str(part.cache_key).encode())
    return digest.hexdigest()


def group_parts(parts: list[KeysPart], workers: int) -> list[tuple[KeysPart, ...]]:
    """Parts dealt into ``KEY_PASS_TASKS_PER_WORKER`` groups per worker, sizes balanced by
    chosen cases (largest first, each to the lightest group)."""
    count = max(1, min(len(parts), max(1, workers) * KEY_PASS_TASKS_PER_WORKER))
    groups: list[list[KeysPart]] = [[] for _ in range(count)]
    load = [0] * count
    for part in sorted(parts, key=lambda p: (-len(p.case_ids), p.label)):
        lightest = load.index(min(load))
        groups[lightest].append(part)
        load[lightest] += len(part.case_ids)
    return [tuple(sorted(g, key=lambda p: p.label)) for g in groups if g]


def _run(job: KeysJob) -> KeysResult:
    # local: the scanner pulls in Presidio and spaCy (~90 MB), which the flow's process, that
    # imports this module for the jobs' types, never needs (tests/flows/test_flow_imports.py)
    from golden_distill.redaction.key_scan import KeyScanner, no_cyclic_gc

    check_same_code(job.pipeline_version, job.label)
    started = time.perf_counter()
    scanner = KeyScanner(job.config.redaction, run_key(job.config, job.key_id).secret)
    work = work_folder(job.config)
    clock = StageClock(where=job.label)

    def chosen(part: KeysPart) -> list[dict]:  # rows as the redaction task sees them
        ids = pl.Series(list(part.case_ids), dtype=pl.String)
        frame = work.scan_frame(part.candidates_path).filter(pl.col("case_id").is_in(ids.implode()))
        return frame.collect().to_arrow().to_pylist()

    found: list[KeyDigests] = []
    cases = 0
    for part in job.parts:
        with no_cyclic_gc():  # a shard's rows: many containers, none garbage (key_scan.py)
            rows = clock.call("keys", chosen, part)
            found.append(clock.call("keys", scanner.digests, rows))
        cases += len(rows)
    merged = RunKeys.merge(found)
    return KeysResult(
        index=job.index,
        label=job.label,
        cache_key=job.cache_key,
        digests=KeyDigests(originals=merged.originals, bases=merged.bases),
        cases=cases,
        seconds=time.perf_counter() - started,
    )


@task(
    name="collect-keys",
    task_run_name="keys-{job.index}",
    cache_key_fn=job_cache_key,
    persist_result=True,
)
def collect_keys(job: KeysJob) -> KeysResult:
    """Keyed digests of the original keys of a few shards' chosen cases."""
    return _run(job)


def save_run_keys(work: WorkFolder, run: RunKeys) -> str:
    """Write the run's merged digests once (named by content); the location redaction loads."""
    location = work.join(RUN_KEYS_FOLDER, f"{run.fingerprint[:32]}.npz")
    if not work.exists(location):
        work.write_bytes(location, run.to_bytes())
        if work.is_local:  # keyed digests, not raw keys: private all the same
            work.make_private(Path(location).parent, [Path(location)])
    return location


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
