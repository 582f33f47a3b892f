"""What the flow hands a shard task, and what the task hands back: paths and counts, never rows.

Both cross process boundaries (process pool, Dask) and are persisted by Prefect as cached
results, so they are plain picklable dataclasses holding strings and numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.source_files import Shard


@dataclass(frozen=True)
class ShardJob:
    index: int
    shard: Shard
    config: PipelineConfig
    out_dir: str  # this shard's own folder under the work dir (named by its cache key)
    cache_key: str | None  # None: never reuse (database source, or caching off)
    key_id: str | None = None  # the run's pseudonym key id; a worker with another key fails
    source_format: str | None = None
    since: str | None = None  # ISO-8601, UTC
    until: str | None = None


@dataclass
class ShardResult:
    """A finished shard: where its files are and what happened to its records (counts only)."""

    index: int
    label: str
    cache_key: str | None
    candidates_path: str  # GOLDEN_SCHEMA parquet of funnel-selected, redacted cases
    signatures_path: str  # dedup signatures of those cases
    decisions_path: str  # one small row per case read: funnel membership, candidate, status
    quarantine_path: str  # JSONL, may hold raw source lines: stays in the work dir
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def candidates(self) -> int:
        return int(self.stats.get("candidates", 0))
