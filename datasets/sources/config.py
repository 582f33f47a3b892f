"""Ingest configuration: how recordings are read into canonical cases (section `ingest:`)."""

from __future__ import annotations

from pydantic import Field

from golden_distill.datasets.canonical_json import DEFAULT_VOLATILE_KEYS
from golden_distill.datasets.config_model import StrictModel


class IngestConfig(StrictModel):
    volatile_keys: list[str] = Field(
        default_factory=lambda: sorted(DEFAULT_VOLATILE_KEYS),
        description="Argument keys (any depth, case-insensitive) removed before hashing canonical "
        "arguments: request ids, timestamps, nonces. Replay lookups ignore them.",
    )
    max_line_bytes: int = Field(
        8 * 1024 * 1024,
        gt=0,
        description="A JSONL line longer than this is quarantined as `oversized_line` unread.",
    )
    batch_rows: int = Field(
        2_000, gt=0, description="Cases buffered before a Parquet row group is written."
    )
    rows_per_shard: int = Field(
        100_000, gt=0, description="Cases per canonical shard file before rolling to the next."
    )
