"""Redact one canonical/golden Parquet table in one process, with a per-shard string cache.

Shards are the unit of parallelism: each process builds (or unpickles) one ``Redactor`` and
feeds it whole tables, possibly from several threads at once; within a table distinct strings
are analyzed once (the findings cache belongs to this call, not to the redactor, so calls never
see or clear each other's entries and memory stays bounded by one shard) and the analyzer is
called in batches. The output keeps every field and row order; quarantined cases are left out
and reported with reason and entity types only.

A table whose keys the run's key digests cover (the flow's: its key pass listed them) is
redacted in one pass, one batch alive at a time (``collisions.RunCoveredGuard`` decides each
batch's keys as the table-wide guard would); any other table (``golden redact`` on a canonical
shard, a key the digests miss) in two: every key first (``CollisionGuard``), then the batches.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pyarrow as pa

from golden_distill.datasets.quarantine import QuarantineEntry
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.redaction.collisions import CollisionGuard, NotCovered, RunCoveredGuard
from golden_distill.redaction.findings_cache import FindingsCache
from golden_distill.redaction.key_digests import PublishedDigests, RunKeys
from golden_distill.redaction.known_bases import KnownBases
from golden_distill.redaction.redactor import STAGE, Redactor, keys_of

DEFAULT_BATCH_CASES = 1_000
#: In two passes, tables up to this many rows keep their scans between the key pass and
#: redaction; larger ones (a whole canonical shard given to `golden redact`) are scanned twice
#: rather than held in memory.
KEEP_SCANS_ROWS = 20_000

_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while any call runs (counted: concurrent calls in threads must not
    re-enable it under each other, nor leave it off). A shard creates millions of small objects
    that all live until it ends: the GC would re-walk them over and over for nothing to free."""
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


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
    #: field inventory (``inventory.py``): (tool, path, handling) -> count, never values
    inventory: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    #: digests of the pseudonyms it published, for the run-wide collision check
    published_keys: PublishedDigests | None = None
    #: original keys the run's digests did not hold (0 when the key pass saw this table)
    uncovered_keys: int = 0

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
    table: pa.Table,
    redactor: Redactor,
    *,
    batch_cases: int = DEFAULT_BATCH_CASES,
    run_keys: RunKeys | None = None,
    known_bases: KnownBases | None = None,
) -> ShardRedactionResult:
    """Redact every case of ``table``; quarantined cases are dropped from the output table.
    ``run_keys``: the run's key digests (the flow's key pass), so no pseudonym equals an
    original of another table; ``known_bases``: the base pseudonyms that key pass computed for
    this table (``known_bases.py``: looked up, not computed again)."""
    started = time.perf_counter()
    with _gc_paused():
        # the work is a function of its own so that everything it built (scans, the findings
        # cache, row dicts) is freed by reference counting while the GC is still paused: the
        # first collection after the pause walks every object allocated during it that lives
        done = _redact_batches(table, redactor, batch_cases, run_keys, known_bases)
    done.seconds = time.perf_counter() - started
    return done


class _Collected:
    """What a table's batches give: kept rows (as Arrow, one batch at a time: a redacted row
    as Python objects is ~10x its Arrow size), refusals and counts."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.parts: list[pa.Table] = []
        self.quarantined: list[QuarantinedCase] = []
        self.counts: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.inventory: Counter[tuple[str, str, str]] = Counter()

    def add(self, rows: list[dict], results: list) -> None:
        kept: list[dict] = []
        for row, result in zip(rows, results, strict=True):
            self.inventory.update(result.fields)
            if result.row is not None:
                self.counts.update(result.counts)
                kept.append(result.row)
                continue
            source = row.get("source") or {}
            self.reasons[result.reason or "unknown"] += 1
            self.quarantined.append(
                QuarantinedCase(
                    case_id=result.case_id,
                    reason=result.reason or "unknown",
                    entity_types=result.entity_types,
                    uri=source.get("uri"),
                    position=source.get("position"),
                    detail=result.detail,
                )
            )
        if kept:
            self.parts.append(pa.Table.from_pylist(kept, schema=self.schema))

    def result(
        self, table: pa.Table, redactor: Redactor, guard: CollisionGuard
    ) -> ShardRedactionResult:
        out = pa.concat_tables(self.parts).combine_chunks() if self.parts else None
        return ShardRedactionResult(
            table=out if out is not None else self.schema.empty_table(),
            quarantined=self.quarantined,
            entity_counts=self.counts,
            reasons=self.reasons,
            cases_in=table.num_rows,
            key_id=redactor.key_id,
            inventory=self.inventory,
            published_keys=guard.published,
            uncovered_keys=guard.uncovered,
        )


def _redact_batches(
    table: pa.Table,
    redactor: Redactor,
    batch_cases: int,
    run_keys: RunKeys | None = None,
    known_bases: KnownBases | None = None,
) -> ShardRedactionResult:
    findings = redactor.findings_cache()  # this call's own: pure per string, dropped on return
    if run_keys is not None and len(run_keys.originals):
        try:
            return _redact_one_pass(table, redactor, batch_cases, run_keys, findings, known_bases)
        except NotCovered:
            pass  # rare: the eager guard decides this table (the findings stand: pure)
    return _redact_two_pass(table, redactor, batch_cases, run_keys, findings)


def _redact_one_pass(
    table: pa.Table,
    redactor: Redactor,
    batch_cases: int,
    run_keys: RunKeys,
    findings: FindingsCache,
    known_bases: KnownBases | None = None,
) -> ShardRedactionResult:
    """The flow's case (the run's key digests hold every key of the table): each batch is
    prepared, its keys decided (``RunCoveredGuard``) and redacted before the next is read, so
    one batch's rows and scans are alive at a time. Raises ``NotCovered`` (from the guard)
    when the table needs the eager guard."""
    guard = RunCoveredGuard(redactor.key.secret, run_keys, known_bases)
    out = _Collected(output_schema(table.schema))
    for batch in table.to_batches(max_chunksize=batch_cases):
        rows = batch.to_pylist()
        prepared = redactor.prepare(rows, findings)
        guard.add(keys_of(prepared))
        out.add(rows, redactor.redact_many(rows, findings, guard, prepared))
        del rows, prepared
    return out.result(table, redactor, guard)


def _redact_two_pass(
    table: pa.Table,
    redactor: Redactor,
    batch_cases: int,
    run_keys: RunKeys | None,
    findings: FindingsCache,
) -> ShardRedactionResult:
    """Every original key of the table first (``CollisionGuard``), so no pseudonym equals
    another original; then the redaction. A table of chosen cases keeps its scans between the
    two, a whole canonical shard (``golden redact``) is scanned twice."""
    keep = table.num_rows <= KEEP_SCANS_ROWS
    keys = []
    prepared: list[list] = []
    kept_rows: list[list[dict]] = []  # the rows of each batch, when their scans are kept
    for batch in table.to_batches(max_chunksize=batch_cases):
        rows = batch.to_pylist()
        done = redactor.prepare(rows, findings)
        keys.extend(keys_of(done))
        prepared.append(done if keep else [])
        kept_rows.append(rows if keep else [])
        del rows
    guard = CollisionGuard(redactor.key.secret, keys, run_keys)
    del keys
    out = _Collected(output_schema(table.schema))
    for n, batch in enumerate(table.to_batches(max_chunksize=batch_cases)):
        # scans copy what they change (``slots.case_slots``): the batch's rows are as read
        rows = kept_rows[n] or batch.to_pylist()
        results = redactor.redact_many(rows, findings, guard, prepared[n] or None)
        prepared[n] = []
        kept_rows[n] = []
        out.add(rows, results)
    return out.result(table, redactor, guard)
