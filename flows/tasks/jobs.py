"""What the flow hands a shard task, and what the task hands back: paths and counts, never rows.

Two per-shard tasks: ``ShardJob`` (read -> funnels -> signatures, every candidate) and
``RedactJob`` (redact only the cases quotas and dedup chose, so Presidio never works on a case
that would not be published).

Both cross process boundaries (process pool, Dask) and are persisted by Prefect as cached
results, so they are plain picklable dataclasses holding strings and numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from golden_distill.datasets.sources.discovery import Shard
from golden_distill.flows.config import PipelineConfig
from golden_distill.redaction.key_digests import KeyDigests, PublishedDigests


@dataclass(frozen=True)
class ShardJob:
    index: int
    shard: Shard
    config: PipelineConfig
    out_dir: str  # this shard's own folder under the work dir (named by its cache key)
    cache_key: str | None  # None: never reuse (database source, or caching off)
    key_id: str | None = None  # the run's pseudonym key id; a worker with another key fails
    pipeline_version: str = ""  # the flow's code version; a worker running other code fails
    source_format: str | None = None
    since: str | None = None  # ISO-8601, UTC
    until: str | None = None


@dataclass
class ShardResult:
    """A finished shard: where its files are and what happened to its records (counts only)."""

    index: int
    label: str
    cache_key: str | None
    candidates_path: str  # funnel-selected cases, NOT redacted yet (work dir only)
    signatures_path: str  # dedup signatures of those cases
    decisions_path: str  # one small row per case read: funnel membership, candidate, status
    quarantine_path: str  # JSONL, may hold raw source lines: stays in the work dir
    #: every record's case id, content digest and place (datasets/case_identity.py); ""
    #: for a result made before identities were kept (its shard is not checked)
    identities_path: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def candidates(self) -> int:
        return int(self.stats.get("candidates", 0))


@dataclass(frozen=True)
class RedactJob:
    """Redact the chosen cases of one shard (after quotas and dedup): only what gets published."""

    index: int
    label: str
    candidates_path: str  # the shard's unredacted candidates (work dir)
    case_ids: tuple[str, ...]  # the cases of this shard chosen for publishing, sorted
    config: PipelineConfig
    out_dir: str
    cache_key: str | None
    key_id: str | None = None
    pipeline_version: str = ""
    #: the run's merged key digests (flows/tasks/keys.py; no raw keys), so no pseudonym this
    #: task publishes is an original of another shard
    run_keys_path: str | None = None
    #: where the key pass left this shard's base pseudonyms (redaction/known_bases.py; no raw
    #: keys): read when present, else they are computed again
    known_bases_path: str | None = None


@dataclass
class RedactResult:
    index: int
    label: str
    cache_key: str | None
    redacted_path: str  # GOLDEN_SCHEMA parquet of the redacted cases
    quarantine_path: str  # cases redaction refused: ids, reasons, entity types (no text)
    quarantined: dict[str, str] = field(default_factory=dict)  # case_id -> reason
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    #: digests of the pseudonyms it published (``redaction/key_digests.py``), checked against
    #: the run's final key digests when replacements added keys after this task ran
    published_keys: PublishedDigests | None = None
    #: the run key digests it ran with (``RedactJob.run_keys_path``)
    run_keys_path: str | None = None
    #: a redo's first pass (cache key, redacted file): kept by work-folder pruning so a rerun
    #: takes both from the cache
    superseded: tuple[str | None, str] | None = None


@dataclass(frozen=True)
class RedactGroupJob:
    """Several shards' ``RedactJob`` in one task run (``redact.redact_shards``): Prefect's own
    cost of a task run (~0.3-0.4 s of a worker) is paid once per group, not once per shard.
    Each shard keeps its own cache key, folder and result."""

    index: int  # its first job's
    label: str
    jobs: tuple[RedactJob, ...]
    cache_key: str | None  # from every job's key; None when one is uncacheable
    out_dir: str  # its first job's folder (where the local engine keeps the group's result)


@dataclass
class RedactGroupResult:
    index: int
    label: str
    cache_key: str | None
    results: list[RedactResult] = field(default_factory=list)  # one per job, in job order

    @property
    def stats(self) -> dict[str, Any]:
        """What the progress line counts: the group's redacted cases."""
        return {"redacted": sum(int(r.stats.get("redacted", 0)) for r in self.results)}


@dataclass(frozen=True)
class KeysPart:
    """One shard's chosen cases."""

    label: str
    candidates_path: str  # the shard's unredacted candidates (work dir)
    case_ids: tuple[str, ...]  # chosen cases of this shard, sorted
    cache_key: str | None  # the shard's redaction key (shard, chosen ids, key id)
    #: where to leave the shard's base pseudonyms for its redaction (redaction/known_bases.py)
    known_bases_path: str | None = None


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
