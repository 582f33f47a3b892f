"""The redaction stage of the `distill` flow: key pass, redaction rounds, collision check.

    [per round: chosen cases not redacted yet -> key pass (a few grouped tasks) -> one run-wide
     key-digest file -> redaction per shard, a few shards per task; refused cases are replaced
     from their clusters]
        -> a task that ran with older key digests is redone only if it would now decide
           differently (redaction/key_digests.py)

Only wiring: what a task does lives in flows/tasks/keys.py and flows/tasks/redact.py, the
decisions in redaction/.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import polars as pl

from golden_distill.flows.caching import pipeline_version
from golden_distill.flows.erased_check import ErasedCheck
from golden_distill.flows.memory import release_memory
from golden_distill.flows.preflight import Prepared
from golden_distill.flows.tasks.jobs import KeysJob, KeysPart, RedactJob, RedactResult, ShardResult
from golden_distill.flows.tasks.keys import (
    collect_keys,
    group_parts,
    keys_cache_key,
    save_run_keys,
)
from golden_distill.flows.tasks.redact import (
    collision_redo_jobs,
    group_redact_jobs,
    redact_cache_key,
    redact_shards,
)
from golden_distill.flows.tasks.redact_body import load_run_keys
from golden_distill.flows.tasks.selection_result import Selection
from golden_distill.flows.tasks.task_guards import outputs_present
from golden_distill.flows.work_folder import work_folder
from golden_distill.redaction.key_digests import RunKeys

#: An engine of flows/engine.py (``PrefectEngine`` or ``LocalEngine``).
Engine = Any


def chosen_by_shard(
    prepared: Prepared, results: list[ShardResult], ids: pl.Series, done: set[str]
) -> list[tuple[ShardResult, tuple[str, ...]]]:
    """Per shard holding chosen cases not redacted yet: those cases' ids, sorted. Matched in
    polars over every shard's candidate ids at once: only the chosen ids become Python strings
    (the flow's process holds them through the run; the night's candidate ids would leave its
    heap fragmented beside them)."""
    redacted = pl.Series("case_id", sorted(done), dtype=pl.String)
    wanted = pl.DataFrame({"case_id": ids.cast(pl.String)}).filter(
        ~pl.col("case_id").is_in(redacted.implode())
    )
    if wanted.height == 0:
        return []
    work = work_folder(prepared.resolved.config)
    shards = pl.concat(
        [
            work.read_frame(result.candidates_path, columns=["case_id"]).with_columns(
                _shard=pl.lit(index, dtype=pl.Int32)
            )
            for index, result in enumerate(results)
        ]
    )
    found = shards.join(wanted, on="case_id", how="semi").unique().sort("_shard", "case_id")
    del shards
    mine = found.partition_by("_shard", as_dict=True, include_key=False)
    out = []
    for index, result in enumerate(results):
        part = mine.get((index,))
        if part is not None and part.height:
            out.append((result, tuple(part.get_column("case_id").to_list())))
    return out


def known_bases_paths(
    prepared: Prepared, chosen: list[tuple[ShardResult, tuple[str, ...]]], round_no: int
) -> list[str]:
    """Per chosen shard, where its key pass leaves the base pseudonyms its redaction reads
    (redaction/known_bases.py): named by the shard's redaction key, so a cached key pass's
    file serves the same redaction."""
    work = work_folder(prepared.resolved.config)
    paths = []
    for n, (result, mine) in enumerate(chosen):
        key = redact_cache_key(result.cache_key, mine, prepared.key_id)
        name = key[:16] if key else f"{time.time_ns()}-{round_no}-{n}"
        paths.append(work.next_to(result.candidates_path, f"key-bases-{name}.arrow"))
    return paths


def make_keys_jobs(
    prepared: Prepared,
    chosen: list[tuple[ShardResult, tuple[str, ...]]],
    round_no: int,
    bases_paths: list[str] | None = None,
) -> list[KeysJob]:
    """The key pass of the chosen cases, in a few tasks of several shards each
    (flows/tasks/keys.py)."""
    version = pipeline_version()
    work = work_folder(prepared.resolved.config)
    parts = [
        KeysPart(
            label=result.label,
            candidates_path=result.candidates_path,
            case_ids=mine,
            cache_key=redact_cache_key(result.cache_key, mine, prepared.key_id),
            known_bases_path=bases,
        )
        for (result, mine), bases in zip(chosen, bases_paths or [None] * len(chosen), strict=True)
    ]
    jobs = []
    for n, group in enumerate(group_parts(parts, prepared.resolved.config.run.max_parallel_shards)):
        key = keys_cache_key(group)
        folder = f"keys-{key[:16]}" if key else f"keys-{time.time_ns()}-{round_no}-{n}"
        more = f" +{len(group) - 1} shard(s)" if len(group) > 1 else ""
        jobs.append(
            KeysJob(
                index=round_no * 1000 + n,
                label=f"{group[0].label}{more}",
                parts=group,
                config=prepared.resolved.config,
                out_dir=work.next_to(group[0].candidates_path, folder),
                cache_key=key,
                key_id=prepared.key_id,
                pipeline_version=version,
            )
        )
    return jobs


def redact_jobs(
    prepared: Prepared,
    chosen: list[tuple[ShardResult, tuple[str, ...]]],
    round_no: int,
    run_keys_path: str,
    bases_paths: list[str] | None = None,
) -> list[RedactJob]:
    """One redact job per shard with chosen cases not redacted yet."""
    version = pipeline_version()
    work = work_folder(prepared.resolved.config)
    jobs = []
    bases = bases_paths or [None] * len(chosen)
    for (result, mine), known_bases_path in zip(chosen, bases, strict=True):
        key = redact_cache_key(result.cache_key, mine, prepared.key_id)
        folder = f"redacted-{key[:16]}" if key else f"redacted-{time.time_ns()}-{round_no}"
        jobs.append(
            RedactJob(
                index=result.index * 100 + round_no,
                label=result.label,
                candidates_path=result.candidates_path,
                case_ids=mine,
                config=prepared.resolved.config,
                out_dir=work.next_to(result.candidates_path, folder),
                cache_key=key,
                key_id=prepared.key_id,
                pipeline_version=version,
                run_keys_path=run_keys_path,
                known_bases_path=known_bases_path,
            )
        )
    return jobs


#: A round with fewer chosen cases than this runs its tasks one at a time: each redaction
#: process holds ~0.5 GB once it has loaded the redactor and redacted a shard, and a second one
#: would save a few seconds of a small round (a later round's replacements: ~2k cases at 2M
#: sessions) at the price of the run's peak.
ONE_PROCESS_ROUND_CASES = 5_000


def round_parallel(cases: int) -> int | None:
    """How many tasks at once for a round of ``cases`` chosen cases (its key pass and its
    redaction): one for a small round, else as many as the runner has workers (None)."""
    return 1 if cases < ONE_PROCESS_ROUND_CASES else None


def run_redact_jobs(
    engine: Engine, prepared: Prepared, jobs: list[RedactJob], parallel: int | None = None
) -> tuple[dict[int, RedactResult], int, set[str]]:
    """Redact ``jobs`` a few shards per task (``group_redact_jobs``): each shard's result by
    its job's index, the tasks taken from the cache, and the groups' cache keys (kept by
    work-folder pruning). A cached group whose shards' files were removed runs again."""
    workers = prepared.resolved.config.run.max_parallel_shards
    groups = group_redact_jobs(jobs, workers)
    found, hits = engine.map(redact_shards, groups, "redact_done", "redact", parallel)
    results = {r.index: r for i in sorted(found) for r in found[i].results}
    work = work_folder(prepared.resolved.config)
    by_index = {job.index: job for job in jobs}
    lost = [by_index[i] for i, r in results.items() if not outputs_present(r, work)]
    if lost:
        engine.logger.info("%d cached redaction(s) lost their files: redoing", len(lost))
        again = [replace(g, cache_key=None) for g in group_redact_jobs(lost, workers)]
        redone, _ = engine.map(redact_shards, again, "redact_done", "redact", parallel)
        results.update({r.index: r for g in redone.values() for r in g.results})
        hits = max(0, hits - len(again))
    return results, hits, {g.cache_key for g in groups if g.cache_key}


#: Redaction rounds: a refused representative is replaced by the next member of its cluster,
#: which is redacted in the next round. Refusals are rare; more rounds than this means a
#: systematic problem, and the remaining clusters are published without a replacement.
MAX_REDACTION_ROUNDS = 4


def redact_selection(
    engine: Engine, prepared: Prepared, results: list[ShardResult], selection: Selection
) -> tuple[list[RedactResult], int, set[str]]:
    """Redaction rounds, each preceded by the key pass of its cases (so every task knows every
    original key of the run: no pseudonym is another shard's original), then the one check
    that a task which ran with older key digests (earlier round, or cached) still stands."""
    logger = engine.logger
    resolved = prepared.resolved
    redacted: list[RedactResult] = []
    done: set[str] = set()
    cached = 0
    all_jobs: list[RedactJob] = []
    work = resolved.work
    run_keys_path = ""  # the run's merged key digests, read back when needed (not held)
    key_passes: set[str] = set()  # key pass and group cache keys (kept by work-folder pruning)
    erased = ErasedCheck(resolved)  # the erasure log's raw digests (flows/erased_check.py)
    for round_no in range(MAX_REDACTION_ROUNDS):
        chosen = chosen_by_shard(prepared, results, selection.new_representative_ids(), done)
        if not chosen:
            break
        parallel = round_parallel(sum(len(ids) for _, ids in chosen))
        bases_paths = known_bases_paths(prepared, chosen, round_no)
        keys_jobs = make_keys_jobs(prepared, chosen, round_no, bases_paths)
        key_passes |= {job.cache_key for job in keys_jobs if job.cache_key}
        keys, _ = engine.map(collect_keys, keys_jobs, "keys_done", "keys", parallel)
        # the key-pass workers leave before the merge (their ~0.5 GB each beside the flow's
        # peak); redaction starts fresh processes: a key-pass worker would start it at ~0.47 GB
        # of freed but fragmented heap (measured on a 2M-session run)
        engine.fresh_workers()
        previous = load_run_keys(work, run_keys_path) or RunKeys()
        run_keys_path = save_run_keys(
            work, RunKeys.merge([previous, *(keys[i].digests for i in sorted(keys))])
        )
        del keys, previous
        release_memory()  # the merge's working memory; the digests stay in their file only
        jobs = redact_jobs(prepared, chosen, round_no, run_keys_path, bases_paths)
        all_jobs.extend(jobs)
        for job in jobs:
            done.update(job.case_ids)
        found, hits, group_keys = run_redact_jobs(engine, prepared, jobs, parallel)
        cached += hits
        key_passes |= group_keys
        held = erased.mark(work, jobs, found)
        if held:
            logger.warning("%d chosen case(s) hold an erased subject: choosing replacements", held)
        redacted.extend(found[i] for i in sorted(found))
        refused = {cid for r in found.values() for cid in r.quarantined}
        if refused:
            logger.info("redaction refused %d case(s): choosing replacements", len(refused))
        # replacements, and a grown set's quotas once the new cases' tenants are known
        if not selection.after_redaction(
            list(found.values()), refused, resolved.config, resolved.work
        ):
            break
    # a task that ran with other key digests (an earlier round's, a cached one's) is redone
    # only if it would now decide differently (redaction/key_digests.py)
    run = load_run_keys(work, run_keys_path) or RunKeys()
    redo = collision_redo_jobs(all_jobs, redacted, run, run_keys_path)
    if redo:
        logger.info("pseudonym collisions across shards: redoing %d redaction(s)", len(redo))
        found, hits, group_keys = run_redact_jobs(
            engine, prepared, redo, round_parallel(sum(len(job.case_ids) for job in redo))
        )
        cached += hits
        key_passes |= group_keys
        erased.mark(work, redo, found)  # a redone task's refusals must hold the erased ones too
        first = {r.index: r for r in redacted}
        for i, result in found.items():
            result.superseded = (first[i].cache_key, first[i].redacted_path)
        redacted = [r for r in redacted if r.index not in found] + [found[i] for i in sorted(found)]
    return redacted, cached, key_passes
