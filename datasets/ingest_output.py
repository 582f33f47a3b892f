"""What an ingest writes and reports, shared by the single-process and the parallel ingest.

The output layout (``cases/``, ``quarantine.jsonl``, ``summary.json``), the per-source and
whole-run summaries, and ``read_into``, which streams one source through its adapter into a
shard writer. ``ingest`` and ``ingest_parallel`` both build on these; keeping them here (below
both) means neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.shards import ShardWriter
from golden_distill.datasets.sources.base import ReadStats, SourceAdapter

CASES_DIR = "cases"
QUARANTINE_FILE = "quarantine.jsonl"
SUMMARY_FILE = "summary.json"

#: ``progress(records_read_so_far, bytes_read_so_far)``, called every batch.
Progress = Callable[[int, int], None]


@dataclass
class SourceSummary:
    """What one input contributed (``error`` set when it could not be read, or not fully)."""

    uri: str
    format: str | None
    records_read: int = 0
    cases: int = 0
    quarantined: dict[str, int] = field(default_factory=dict)
    bytes_read: int = 0
    seconds: float = 0.0
    error: str | None = None


@dataclass
class IngestSummary:
    out_dir: Path
    records_read: int = 0
    cases_written: int = 0
    quarantined: dict[str, int] = field(default_factory=dict)
    bytes_read: int = 0
    seconds: float = 0.0
    shards: list[Path] = field(default_factory=list)
    sources: list[SourceSummary] = field(default_factory=list)

    @property
    def quarantine_path(self) -> Path:
        return self.out_dir / QUARANTINE_FILE

    @property
    def quarantined_total(self) -> int:
        return sum(self.quarantined.values())

    @property
    def failed(self) -> list[SourceSummary]:
        """Sources that could not be read (fully): the CLI exits non-zero when there are any."""
        return [s for s in self.sources if s.error is not None]

    @property
    def mb_per_second(self) -> float:
        return self.bytes_read / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "records_read": self.records_read,
            "cases_written": self.cases_written,
            "quarantined": dict(sorted(self.quarantined.items())),
            "quarantined_total": self.quarantined_total,
            "bytes_read": self.bytes_read,
            "seconds": round(self.seconds, 3),
            "mb_per_second": round(self.mb_per_second, 2),
            "shards": [str(p.relative_to(self.out_dir)) for p in self.shards],
            "quarantine": QUARANTINE_FILE,
            "sources": [
                {
                    "uri": s.uri,
                    "format": s.format,
                    "records_read": s.records_read,
                    "cases": s.cases,
                    "quarantined": dict(sorted(s.quarantined.items())),
                    "bytes_read": s.bytes_read,
                    "seconds": round(s.seconds, 3),
                    "error": s.error,
                }
                for s in self.sources
            ],
            "failed_sources": len(self.failed),
        }


def read_into(
    adapter: SourceAdapter,
    uri: str,
    writer: ShardWriter,
    quarantine: Quarantine,
    stats: ReadStats,
    tick: Callable[[], None],
) -> None:
    """Stream one source into the shard writer (Arrow batches when the adapter offers them)."""
    read_batches = getattr(adapter, "read_batches", None)
    if read_batches is not None:
        for batch in read_batches(uri, quarantine, stats):
            writer.write_batch(batch)
            tick()
        return
    every = writer.batch_rows
    for n, row in enumerate(adapter.read(uri, quarantine, stats), start=1):
        writer.write(row)
        if n % every == 0:
            tick()
