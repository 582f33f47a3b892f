"""What a key-pass task does, importable without Prefect: read the chosen cases of a few shards
and list the keyed digests of their original keys and base pseudonyms (flows/tasks/keys.py).
With a local process pool it runs in lean helper processes (``flows/lean_helpers.py``).
"""

from __future__ import annotations

import time
from pathlib import Path

from golden_distill.flows.tasks.jobs import KeysJob, KeysPart, KeysResult
from golden_distill.flows.tasks.task_guards import check_same_code, run_key
from golden_distill.flows.timing import StageClock
from golden_distill.flows.work_folder import WorkFolder, work_folder
from golden_distill.redaction.key_digests import KeyDigests, RunKeys
from golden_distill.redaction.known_bases import Entry, KnownBases


def collect_digests(job: KeysJob) -> KeysResult:
    """Keyed digests of the original keys of a few shards' chosen cases (no raw key leaves)."""
    # local: the scanner pulls in Presidio and spaCy (~90 MB), which the flow's process, that
    # imports this module (through flows/tasks/keys.py), never needs (test_flow_imports.py)
    from golden_distill.redaction.key_scan import KeyScanner, no_cyclic_gc

    check_same_code(job.pipeline_version, job.label)
    started = time.perf_counter()
    scanner = KeyScanner(job.config.redaction, run_key(job.config, job.key_id).secret)
    work = work_folder(job.config)
    clock = StageClock(where=job.label)

    def chosen(part: KeysPart) -> list[dict]:  # rows as the redaction task sees them
        return work.read_cases(part.candidates_path, part.case_ids).to_pylist()

    found: list[KeyDigests] = []
    cases = 0
    for part in job.parts:
        known: list[Entry] | None = [] if part.known_bases_path else None
        with no_cyclic_gc():  # a shard's rows: many containers, none garbage (key_scan.py)
            rows = clock.call("keys", chosen, part)
            found.append(clock.call("keys", scanner.digests, rows, known))
        cases += len(rows)
        if known is not None:  # only when the flow gave a location
            clock.call("keys", save_known_bases, work, str(part.known_bases_path), known)
    merged = RunKeys.merge(found)
    return KeysResult(
        index=job.index,
        label=job.label,
        cache_key=job.cache_key,
        digests=KeyDigests(originals=merged.originals, bases=merged.bases),
        cases=cases,
        seconds=time.perf_counter() - started,
    )


def save_known_bases(work: WorkFolder, location: str, entries: list[Entry]) -> None:
    """One shard's base pseudonyms for its redaction task (``known_bases.py``): digests and
    pseudonyms only, private all the same, like the run's key digests."""
    work.write_bytes(location, KnownBases.of(entries).to_bytes())
    if work.is_local:
        work.make_private(Path(location).parent, [Path(location)])


def load_known_bases(work: WorkFolder, location: str | None) -> KnownBases | None:
    """What ``save_known_bases`` left, or None when there is none (a cached key pass whose
    file was pruned, an unreadable file): redaction then computes the pseudonyms itself."""
    if not location or not work.exists(location):
        return None
    try:
        return KnownBases.from_bytes(work.read_bytes(location))
    except Exception:  # an optimisation only: never a reason to fail a redaction
        return None
