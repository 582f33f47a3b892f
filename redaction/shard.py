"""Redact one canonical/golden Parquet table in one process, with a per-shard string cache.

Shards are the unit of parallelism: each process builds (or unpickles) one ``Redactor`` and
feeds it whole tables; within a table distinct strings are analyzed once (the cache lives on the
redactor and is cleared between tables so memory stays bounded by one shard) and the analyzer is
called in batches. The output keeps every field and row order; quarantined cases are left out
and reported with reason and entity types only.
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from dataclasses import dataclass, field

import pyarrow as pa

from golden_distill.datasets.quarantine import QuarantineEntry
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.redaction.redactor import STAGE, Redactor

DEFAULT_BATCH_CASES = 1_000


@dataclass(frozen=True, slots=True)
class QuarantinedCase:
    """A case that must not be published: where it came from, why, and which entity types."""

    case_id: str
    reason: str
    entity_types: tuple[str, ...] = ()
    uri: str | None = None
    position: int | None = None
    detail: str = ""

    def to_entry(self) -> QuarantineEntry:
        detail = self.detail or (
            "entity types: " + ",".join(self.entity_types) if self.entity_types else ""
        )
        return QuarantineEntry(
            stage=STAGE,
            reason=self.reason,
            uri=self.uri or "",
            position=self.position,
            detail=detail,
            case_id=self.case_id,
        )


@dataclass(slots=True)
class ShardRedactionResult:
    table: pa.Table
    quarantined: list[QuarantinedCase]
    entity_counts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    cases_in: int = 0
    seconds: float = 0.0
    key_id: str = ""

    @property
    def cases_out(self) -> int:
        return self.table.num_rows


def output_schema(schema: pa.Schema) -> pa.Schema:
    """GOLDEN_SCHEMA for canonical or golden input (adds the ``redaction`` column)."""
    if set(schema.names) <= set(GOLDEN_SCHEMA.names):
        return GOLDEN_SCHEMA
    if "redaction" in schema.names:
        return schema
    return schema.append(GOLDEN_SCHEMA.field("redaction"))


def redact_table(
    table: pa.Table, redactor: Redactor, *, batch_cases: int = DEFAULT_BATCH_CASES
) -> ShardRedactionResult:
    """Redact every case of ``table``; quarantined cases are dropped from the output table."""
    started = time.perf_counter()
    schema = output_schema(table.schema)
    kept: list[dict] = []
    quarantined: list[QuarantinedCase] = []
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    redactor.clear_cache()
    # a shard creates millions of small objects that all live until it ends: the cyclic GC
    # would re-walk them over and over (cost growing with shard size) for nothing to free
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for batch in table.to_batches(max_chunksize=batch_cases):
            rows = batch.to_pylist()
            for row, result in zip(rows, redactor.redact_many(rows), strict=True):
                if result.row is not None:
                    counts.update(result.counts)
                    kept.append(result.row)
                    continue
                source = row.get("source") or {}
                reasons[result.reason or "unknown"] += 1
                quarantined.append(
                    QuarantinedCase(
                        case_id=result.case_id,
                        reason=result.reason or "unknown",
                        entity_types=result.entity_types,
                        uri=source.get("uri"),
                        position=source.get("position"),
                        detail=result.detail,
                    )
                )
    finally:
        redactor.clear_cache()
        if gc_was_enabled:
            gc.enable()
    out = pa.Table.from_pylist(kept, schema=schema)
    return ShardRedactionResult(
        table=out,
        quarantined=quarantined,
        entity_counts=counts,
        reasons=reasons,
        cases_in=table.num_rows,
        seconds=time.perf_counter() - started,
        key_id=redactor.key_id,
    )
