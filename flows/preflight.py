"""Everything a run can check before Prefect starts: parameters, config, key, store, window,
sources (discovered and fingerprinted) and the shard jobs.

`golden run` calls ``preflight`` before booting Prefect's temporary API, so a bad config, a
missing key, a missing source or an unusable store fails in well under two seconds with one
message and no Prefect output; the flow calls it again as its first step (a deployment run has
no `golden run` in front of it; the fingerprints are memoised, so the second call is cheap).
This module never imports Prefect.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from golden_distill.datasets.case_identity import DIGEST_VERSION
from golden_distill.datasets.sources.discovery import Discovery, Shard, discover
from golden_distill.datasets.store.aliases import LATEST, read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.versions import read_manifest
from golden_distill.flows.caching import pipeline_version, shard_cache_key, shard_config_sha256
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import DistillParams, ResolvedRun
from golden_distill.flows.run_key import run_key
from golden_distill.flows.tasks.jobs import ShardJob
from golden_distill.flows.window import resolve_window, store_watermark, window_unit
from golden_distill.flows.workdir import make_private
from golden_distill.redaction.keys import ENV_VAR, resolve_key


@dataclass(frozen=True)
class Prepared:
    """A run checked and planned: what the flow needs before its first task."""

    resolved: ResolvedRun
    key_id: str | None  # None: the key is in a Prefect Secret block, resolved inside the flow
    discovery: Discovery
    jobs: list[ShardJob]
    run_key: str | None

    @property
    def empty_window(self) -> bool:
        """A scheduled run whose window was already read (the watermark is at its end)."""
        r = self.resolved
        return r.since is not None and r.since == r.until


def validate(params: DistillParams) -> ResolvedRun:
    try:
        resolved = params.resolve()
    except Exception as exc:
        raise StageError("validate", describe(exc)) from None
    _check_store(resolved)
    _check_work(resolved)
    return resolved


def key_id(resolved: ResolvedRun, *, allow_prefect: bool) -> str | None:
    """The pseudonym key's id (a missing key fails in `validate`); None when it can only be
    read from a Prefect Secret block and Prefect is not available yet."""
    red = resolved.config.redaction
    if red.key_secret_block and not allow_prefect and not os.environ.get(ENV_VAR):
        return None
    try:
        found = resolve_key(
            secret_block=red.key_secret_block if allow_prefect else None,
            local_key_file=red.local_key_file,
        )
    except Exception as exc:
        raise StageError("validate", describe(exc)) from None
    return found.key.key_id


def check_key_lineage(resolved: ResolvedRun, kid: str | None) -> None:
    """A run keyed otherwise than the set's latest version is refused unless ``new_key``: its
    pseudonyms would differ from every published one (every tenant would look new, a replay
    of a grown set would mix two keys' ids). ``new_key`` starts a new lineage instead."""
    if kid is None or resolved.params.new_key:
        return
    try:
        store = StoreFS(resolved.store_url, resolved.config.publish.storage_options or None)
        found = latest_key_id(store, resolved.set_name)
    except Exception as exc:
        raise StageError("validate", f"reading the set's key id: {describe(exc)}") from None
    if found is None:
        return
    version, theirs = found
    if theirs and theirs != kid:
        raise StageError(
            "validate",
            f"the pseudonym key {kid} is not the key of {resolved.set_name}@{version} "
            f"({theirs}): its pseudonyms would not match the published ones. Use the set's "
            "key, or pass --new-key (flow parameter new_key) to start a new lineage "
            "built from the sources alone",
        )


def latest_key_id(store: StoreFS, set_name: str) -> tuple[str, str | None] | None:
    """(version, key id) of the set's `latest` version; None for a new set."""
    version = read_alias(store, SetLayout(set_name), LATEST)
    if version is None:
        return None
    return version, read_manifest(store, set_name, version).get("key_id")


def _check_store(resolved: ResolvedRun) -> None:
    """The store URL opens, and a local store is (or can become) a folder."""
    try:
        store = StoreFS(resolved.store_url, resolved.config.publish.storage_options or None)
    except Exception as exc:
        raise StageError("validate", f"store {resolved.store_url}: {describe(exc)}") from None
    if store.is_local:
        root = Path(store.root)
        if root.exists() and not root.is_dir():
            raise StageError("validate", f"store {root}: not a folder")
        existing = next((p for p in (root, *root.parents) if p.exists()), None)
        if existing is None or not os.access(existing, os.W_OK):
            raise StageError("validate", f"store {root}: cannot be created here (not writable)")


def _check_work(resolved: ResolvedRun) -> None:
    """The work folder opens; a URL one answers with this machine's credentials (a missing
    bucket or a bad key fails here, before any task)."""
    try:
        resolved.work.check()
        if not resolved.config.run.remote_work:  # <work_dir>/sets/<set>/: closed like the rest
            folder = resolved.work_dir
            folder.mkdir(parents=True, exist_ok=True)
            make_private(folder, [], stop_at=folder.parent.parent)
    except Exception as exc:
        where = resolved.config.run.work_dir
        raise StageError("validate", f"work folder {where}: {describe(exc)}") from None


def with_window(resolved: ResolvedRun, scheduled_start: datetime | None) -> ResolvedRun:
    """Fix the run's window (see flows/window.py)."""
    params = resolved.params
    watermark = None
    scheduled = scheduled_start is not None and params.since is None and params.until is None
    if scheduled and not params.rebuild:
        try:
            watermark = store_watermark(
                resolved.store_url,
                resolved.set_name,
                resolved.config.publish.storage_options or None,
            )
        except Exception as exc:
            raise StageError("validate", f"reading the watermark: {describe(exc)}") from None
    since, until = resolve_window(
        params.since,
        params.until,
        scheduled_start=scheduled_start,
        watermark=watermark,
        unit=window_unit(resolved.sources),
    )
    return dataclasses.replace(resolved, since=since, until=until)


def plan_shards(resolved: ResolvedRun, shards: list[Shard]) -> list[ShardJob]:
    """One job per shard, with its cache key and content-addressed output folder."""
    config = resolved.config
    window = resolved.window
    work = resolved.work
    config_sha = shard_config_sha256(config)
    version = pipeline_version()
    fmt = resolved.params.source_format
    jobs = []
    for index, shard in enumerate(shards):
        key = None
        if shard.fingerprint and config.run.cache_shards:
            # what the shard is read as (the format given, or sniffed), the file's name inside
            # its source (position-based case ids) and the digest code (its identities file)
            # shape the output as much as its bytes do
            read_as = f"{fmt or '-'}\x1f{shard.name}\x1f{DIGEST_VERSION}"
            key = shard_cache_key(
                fingerprint=f"{shard.fingerprint}\x1f{read_as}",
                config_sha256=config_sha,
                version=version,
                window=window,
            )
        # A cacheable shard's folder is named by its key (content-addressed, reused by reruns);
        # an uncacheable one gets a fresh folder per run.
        folder = key[:32] if key else f"nocache-{time.time_ns()}-{index}"
        jobs.append(
            ShardJob(
                index=index,
                shard=shard,
                config=config,
                out_dir=work.join("shards", folder),
                cache_key=key,
                pipeline_version=version,
                source_format=fmt,
                since=window[0],
                until=window[1],
            )
        )
    return jobs


def preflight(
    params: DistillParams,
    *,
    scheduled_start: datetime | None = None,
    allow_prefect: bool = False,
    before_hashing: Callable[[], None] | None = None,
) -> Prepared:
    """Check and plan a run; raises ``StageError`` (stage `validate` or `discover`).
    ``before_hashing``: called once the config, key and sources are checked and new input files
    are about to be hashed (``golden run`` boots Prefect's API meanwhile)."""
    resolved = with_window(validate(params), scheduled_start)
    kid = key_id(resolved, allow_prefect=allow_prefect)
    check_key_lineage(resolved, kid)
    if resolved.since is not None and resolved.since == resolved.until:
        return Prepared(resolved, kid, Discovery(), [], None)
    try:
        found = discover(
            resolved.sources,
            fmt=params.source_format,
            since=resolved.since,
            until=resolved.until,
            by_mtime=params.by_mtime,
            memo=resolved.work.local_state() / "fingerprints.json",
            before_hashing=before_hashing,
        )
    except Exception as exc:
        raise StageError("discover", describe(exc)) from None
    if not found.shards:
        raise StageError("discover", "the sources name no input in this window")
    jobs = plan_shards(resolved, found.shards)
    key = run_key(resolved, [job.cache_key for job in jobs], kid) if kid else None
    return Prepared(resolved, kid, found, jobs, key)
