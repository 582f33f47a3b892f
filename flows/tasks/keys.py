"""The key pass: digests of every original key of the chosen cases, before any is redacted.

A structural scan only (no Presidio), so the run-wide pseudonym collision check
(``redaction/key_digests.py``) is settled before redaction: the flow merges the digests into
one ``RunKeys`` file in the work folder and every redaction task loads it, so no redaction runs
twice. A shard's key pass takes about a second, less than Prefect's own cost of a task run, so
the shards are grouped into a few tasks (``KEY_PASS_TASKS_PER_WORKER`` per worker). Cached by
each part's shard key, chosen ids and the pseudonym key id. What a task does is in
``keys_body.py`` (no Prefect there: with a local process pool it runs in lean helper processes,
``flows/lean_helpers.py``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from prefect import task

from golden_distill.flows.caching import job_cache_key
from golden_distill.flows.lean_helpers import in_helper
from golden_distill.flows.tasks.jobs import KeysJob, KeysPart, KeysResult
from golden_distill.flows.tasks.keys_body import collect_digests
from golden_distill.flows.work_folder import WorkFolder
from golden_distill.redaction.key_digests import RunKeys

#: Folder of the work folder holding each run's merged key digests (named by content).
RUN_KEYS_FOLDER = "run-keys"


#: Key-pass tasks per worker: enough to keep every worker busy to the end, few enough that
#: Prefect's per-task cost stays small next to the work.
KEY_PASS_TASKS_PER_WORKER = 2


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


@task(
    name="collect-keys",
    task_run_name="keys-{job.index}",
    cache_key_fn=job_cache_key,
    persist_result=True,
)
def collect_keys(job: KeysJob) -> KeysResult:
    """Keyed digests of the original keys of a few shards' chosen cases; in a lean helper
    process when the flow runs them (``flows/lean_helpers.py``)."""
    return in_helper(collect_digests, job)


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
