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

from golden_distill.datasets.quarantine import Quarantine, QuarantineStreak
from golden_distill.datasets.shards import ShardWriter
from golden_distill.datasets.sources.base import ReadStats, SourceAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.discovery import format_hint
from golden_distill.datasets.sources.uris import display_uri

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
    #: set when every record read was quarantined: the format it looks like, if another
    hint: str | None = None


def no_case_message(
    records_read: int,
    quarantined: dict[str, int],
    inputs: int,
    hints: list[tuple[str, str]],
) -> str:
    """Why an input gave no case at all: empty, or every record quarantined, with the format
    hints of the inputs that look like another format (``(input, hint)`` pairs; one line per
    hint, naming up to three of its inputs). A run fails on it: an empty or unreadable input
    must not pass for a quiet night and publish an empty version."""
    if not records_read:
        message = f"no records in the input ({inputs:,} input(s) read, no record found)"
    else:
        reasons = ", ".join(f"{r} {n:,}" for r, n in sorted(quarantined.items()))
        message = f"every one of the {records_read:,} records read was quarantined ({reasons})"
    by_hint: dict[str, list[str]] = {}
    for uri, hint in hints:
        by_hint.setdefault(hint, []).append(uri)
    for hint, uris in sorted(by_hint.items()):
        more = f" and {len(uris) - 3:,} more" if len(uris) > 3 else ""
        message += f"; {hint} ({', '.join(sorted(uris)[:3])}{more})"
    return message


def streak_message(uri: str, fmt: str | None, streak: QuarantineStreak) -> str:
    """Why an input was stopped (``max_consecutive_quarantined``), with a format hint."""
    hint = format_hint(uri, fmt)
    return f"{display_uri(uri)} (read as {fmt}): {streak}" + (f" {hint}" if hint else "")


def bounded_quarantine(path: Path, config: IngestConfig) -> Quarantine:
    """The quarantine an ingest writes, with the config's bounds (datasets/quarantine.py)."""
    return Quarantine(
        path,
        raw_bytes=config.quarantine_raw_bytes,
        max_entries=config.quarantine_max_entries,
        max_consecutive=config.max_consecutive_quarantined,
    )


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

    def nothing_read(self) -> str | None:
        """Why no case came out of the input, when none did (``no_case_message``)."""
        if self.cases_written:
            return None
        hints = [(s.uri, s.hint) for s in self.sources if s.hint]
        return no_case_message(self.records_read, self.quarantined, len(self.sources), hints)

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
                    "hint": s.hint,
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
    name: str = "",
) -> None:
    """Stream one source into the shard writer (Arrow batches when the adapter offers them).

    ``name``: the input's name inside its source (``sources/identity.py``), for adapters that
    derive case ids from positions."""
    read_batches = getattr(adapter, "read_batches", None)
    if read_batches is not None:
        for batch in read_batches(uri, quarantine, stats):
            writer.write_batch(batch)
            tick()
        return
    every = writer.batch_rows
    for n, row in enumerate(adapter.read(uri, quarantine, stats, name=name), start=1):
        quarantine.accepted()
        writer.write(row)
        if n % every == 0:
            tick()
