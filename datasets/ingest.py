"""Ingest: recordings in any supported format -> canonical Parquet shards + quarantine + summary.

``ingest(sources, out_dir)`` expands each source (file, folder, glob, fsspec URL, database URL),
recognises its format by sniffing its first bytes with every registered adapter (unless
``fmt`` says which), streams it through that adapter into ``out_dir/cases/part-NNNNN.parquet``
and writes:

* ``out_dir/quarantine.jsonl``: every record that could not become a case (location + reason);
* ``out_dir/summary.json``: records read, cases written, quarantined per reason, bytes, seconds,
  per source too, and the sources that could not be read at all.

``ingest_table`` does the same in this process with the cases kept in memory (one Arrow table,
no ``cases/`` files) for a caller that reads them straight back.

``jobs=N`` shares the work out to N worker processes (``ingest_parallel``): whole compressed or
non-native files, and line-aligned byte ranges of large plain JSONL files; the output is the same.

One unreadable source does not stop the others: it is reported in the summary (``failed``) and
the caller decides the exit code. A source read in the wrong format is one: it is stopped after
``ingest.max_consecutive_quarantined`` rejected records in a row, with a format hint, and the
quarantine is bounded (``ingest_output.bounded_quarantine``). A summary without any case says
why (``IngestSummary.nothing_read``). Nothing here logs or raises with record text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import orjson
import pyarrow as pa

from golden_distill.datasets.ingest_output import (
    CASES_DIR,
    QUARANTINE_FILE,
    SUMMARY_FILE,
    IngestSummary,
    Progress,
    SourceSummary,
    bounded_quarantine,
    read_into,
    streak_message,
)
from golden_distill.datasets.ingest_parallel import Planned, ingest_in_processes, resolve_jobs
from golden_distill.datasets.quarantine import QuarantineStreak
from golden_distill.datasets.shards import MemorySink, ShardWriter
from golden_distill.datasets.sources.base import ReadStats, SourceAdapter, SourceError
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.discovery import (
    detect_format,
    format_hint,
    sniff_head,
    whole_source_format,
)
from golden_distill.datasets.sources.identity import source_name
from golden_distill.datasets.sources.registry import ADAPTERS
from golden_distill.datasets.sources.uris import (
    display_uri,
    expand_source,
)

_JSONL_NAME = re.compile(r"\.(jsonl|ndjson)(\.gz|\.gzip|\.zst|\.zstd)?$", re.IGNORECASE)


class IngestError(ValueError):
    """The ingest as a whole cannot start (bad output dir, unknown format)."""


def unrecognised_message(uri: str) -> str:
    return (
        f"could not recognise {display_uri(uri)}: not JSONL recordings, Chronicle envelopes, "
        "tau2 results, chat transcripts, evidence tables or OTLP JSON; pass --format"
    )


def plan(
    sources: list[str], fmt: str | None, names: Mapping[str, str] | None = None
) -> Iterator[Planned]:
    """Every input the sources name, in order, with its format (or why it has none) and its
    name inside its source (``sources/identity.py``; ``names`` gives it for some inputs, as the
    flow does for a shard it reads alone)."""
    names = names or {}
    for source in sources:
        whole = whole_source_format(source, fmt)
        if whole is not None:
            yield Planned(source, whole, None)
            continue
        try:
            uris = expand_source(source)
        except SourceError as exc:
            yield Planned(source, fmt, str(exc))
            continue
        for uri in uris:
            name = names.get(uri) or source_name(source, uri)
            if fmt is not None:
                yield Planned(uri, fmt, None, name)
                continue
            try:
                head = sniff_head(uri)
            except SourceError as exc:
                yield Planned(uri, None, str(exc), name)
                continue
            found = detect_format(uri, head)
            if found is None and not head.strip() and _JSONL_NAME.search(uri):
                # nothing decodable at the start (empty, or a compressed stream cut before its
                # first line): read it as recordings, so the damage is reported, not a guess
                found = "native"
            yield Planned(uri, found, None if found else unrecognised_message(uri), name)


def _prepare_out_dir(out_dir: Path, overwrite: bool) -> None:
    cases = out_dir / CASES_DIR
    leftovers = [out_dir / QUARANTINE_FILE, out_dir / SUMMARY_FILE]
    old_shards = sorted(cases.glob("*.parquet*")) if cases.is_dir() else []
    parts = sorted(out_dir.glob("quarantine.part-*.jsonl")) if out_dir.is_dir() else []
    existing = [p for p in leftovers if p.exists()] + old_shards + parts
    if existing and not overwrite:
        raise IngestError(
            f"{out_dir} already holds ingest output ({existing[0].name}); "
            "choose an empty directory or pass --overwrite"
        )
    for path in existing:
        path.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)


def ingest(
    sources: list[str],
    out_dir: Path,
    *,
    fmt: str | None = None,
    config: IngestConfig | None = None,
    progress: Progress | None = None,
    overwrite: bool = False,
    jobs: int = 1,
) -> IngestSummary:
    """Read ``sources`` into canonical shards under ``out_dir``; see the module docstring.

    ``jobs`` > 1 reads with that many worker processes (``0``: one per core), see
    ``ingest_parallel``: same cases, positions and quarantine, shards named
    ``part-<unit>-NNNNN.parquet``. ``1`` (the default) reads in this process.
    """
    if jobs < 0:
        raise IngestError(f"jobs must be >= 0 (0: one per core), not {jobs}")
    settings = config or IngestConfig()

    def read(out: Path) -> IngestSummary:
        workers = resolve_jobs(jobs) if jobs != 1 else 1
        if workers > 1:
            shared = ingest_in_processes(list(plan(sources, fmt)), out, settings, workers, progress)
            if shared is not None:  # None: nothing to share out (one small input)
                return shared
        writer = ShardWriter(
            out / CASES_DIR,
            batch_rows=settings.batch_rows,
            rows_per_shard=settings.rows_per_shard,
        )
        return _ingest_here(sources, out, fmt, settings, progress, writer, None)

    return _ingest_into(Path(out_dir), fmt, overwrite, read)


def ingest_table(
    sources: list[str],
    out_dir: Path,
    *,
    fmt: str | None = None,
    config: IngestConfig | None = None,
    names: Mapping[str, str] | None = None,
) -> tuple[pa.Table, IngestSummary]:
    """``ingest`` in this process with the cases kept in memory: one Arrow table instead of
    ``cases/`` files (``out_dir`` gets the quarantine and the summary as usual). For a caller
    that would read the shards straight back (the flow's shard step): the same table, without
    Parquet's encoding and decoding. ``names``: the name of an input inside the source it was
    found in (``uri -> name``, see ``sources/identity.py``), for an input read on its own."""
    settings = config or IngestConfig()
    sink = MemorySink(batch_rows=settings.batch_rows)

    def read(out: Path) -> IngestSummary:
        return _ingest_here(sources, out, fmt, settings, None, sink, names)

    summary = _ingest_into(Path(out_dir), fmt, False, read)
    return sink.table(), summary


def _ingest_into(
    out_dir: Path, fmt: str | None, overwrite: bool, read: Callable[[Path], IngestSummary]
) -> IngestSummary:
    """What every ingest does around its reading: checks, an empty ``out_dir``, the quarantine
    file (present, maybe empty, so readers need no special case) and the summary."""
    if fmt is not None and fmt not in ADAPTERS:
        raise IngestError(f"unknown format {fmt!r}; known: {', '.join(ADAPTERS)}")
    _prepare_out_dir(out_dir, overwrite)
    started = time.perf_counter()
    summary = read(out_dir)
    (out_dir / QUARANTINE_FILE).touch()
    summary.seconds = time.perf_counter() - started
    (out_dir / SUMMARY_FILE).write_bytes(
        orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2) + b"\n"
    )
    return summary


def _ingest_here(
    sources: list[str],
    out_dir: Path,
    fmt: str | None,
    config: IngestConfig,
    progress: Progress | None,
    writer: ShardWriter,
    names: Mapping[str, str] | None,
) -> IngestSummary:
    """The single-process ingest: every source in turn, through one shard writer (or
    ``MemorySink``)."""
    summary = IngestSummary(out_dir=out_dir)
    adapters: dict[str, SourceAdapter] = {}
    done_records, done_bytes = 0, 0
    with bounded_quarantine(out_dir / QUARANTINE_FILE, config) as quarantine, writer:
        for uri, name, error, in_source in plan(sources, fmt, names):
            item = SourceSummary(uri=display_uri(uri), format=name, error=error)
            summary.sources.append(item)
            if error is not None or name is None:
                continue
            if name not in adapters:
                adapters[name] = ADAPTERS[name](config)  # type: ignore[call-arg]
            stats = ReadStats()
            before = dict(quarantine.counts)
            source_start = time.perf_counter()

            def tick(
                stats: ReadStats = stats, base: tuple[int, int] = (done_records, done_bytes)
            ) -> None:
                if progress is not None:
                    progress(base[0] + stats.records_read, base[1] + stats.bytes_read)

            quarantine.accepted()  # a new input: no run of rejected records yet
            try:
                read_into(adapters[name], uri, writer, quarantine, stats, tick, in_source)
            except SourceError as exc:
                item.error = str(exc)
            except QuarantineStreak as exc:
                item.error = streak_message(uri, name, exc)
            if item.error is None and not stats.cases:
                item.hint = format_hint(uri, name) or None
            item.records_read, item.cases, item.bytes_read = (
                stats.records_read,
                stats.cases,
                stats.bytes_read,
            )
            item.quarantined = {
                reason: count - before.get(reason, 0)
                for reason, count in quarantine.counts.items()
                if count - before.get(reason, 0)
            }
            item.seconds = time.perf_counter() - source_start
            done_records += stats.records_read
            done_bytes += stats.bytes_read
            tick()
        summary.quarantined = dict(quarantine.counts)
    summary.shards = list(writer.paths)
    summary.cases_written = writer.rows_written
    summary.records_read = done_records
    summary.bytes_read = done_bytes
    return summary
