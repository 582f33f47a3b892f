"""Grouping spans by trace in bounded memory.

A trace's spans may be anywhere in an export file, so grouping needs to see the whole file. Up to
``max_spans`` spans are held in memory (the common case: a rotated collector file). Past that,
every span goes to one of ``buckets`` temporary JSONL files chosen by a hash of its trace id;
each bucket is then grouped on its own, so memory stays around ``max_spans / buckets`` spans
per bucket plus the in-memory part. Traces come out in first-seen order when nothing spilled,
and bucket by bucket (first-seen order within a bucket) when it did: deterministic either way.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from golden_distill.datasets.sources.otel_spans import Span, parse_span

Member = tuple[Span, Any]


class SpanGrouper:
    def __init__(self, max_spans: int, buckets: int = 16) -> None:
        self.max_spans = max_spans
        self.buckets = buckets
        self.held = 0
        self.traces: dict[str, list[Member]] = {}
        self._dir: Path | None = None
        self._files: list[IO[bytes]] = []

    @property
    def spilled(self) -> bool:
        return self._dir is not None

    def add(self, span: Span, raw: Any, where: str) -> None:
        if self._dir is None:
            self.traces.setdefault(span.trace_id, []).append((span, raw))
            self.held += 1
            if self.held > self.max_spans:
                self._spill_all()
            return
        self._write(span.trace_id, raw, span.resource, where)

    def _bucket(self, trace_id: str) -> int:
        return int.from_bytes(hashlib.blake2b(trace_id.encode(), digest_size=4).digest()) % len(
            self._files
        )

    def _write(self, trace_id: str, raw: Any, resource: dict[str, Any], where: str) -> None:
        line = orjson.dumps({"raw": raw, "resource": resource, "where": where}, default=str)
        self._files[self._bucket(trace_id)].write(line + b"\n")

    def _spill_all(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="golden-otel-"))
        self._files = [(self._dir / f"b{i:03d}.jsonl").open("wb") for i in range(self.buckets)]
        for trace_id, members in self.traces.items():
            for span, raw in members:
                self._write(trace_id, raw, span.resource, "")
        self.traces = {}

    def groups(self) -> Iterator[tuple[str, list[Member]]]:
        """(trace id, [(span, raw span)]) for every trace; removes spill files when done."""
        if self._dir is None:
            yield from self.traces.items()
            self.traces = {}
            return
        try:
            for fh in self._files:
                fh.close()
            for i in range(self.buckets):
                traces: dict[str, list[Member]] = {}
                with (self._dir / f"b{i:03d}.jsonl").open("rb") as fh:
                    for line in fh:
                        item = orjson.loads(line)
                        span = parse_span(item["raw"], item["resource"], item["where"])
                        traces.setdefault(span.trace_id, []).append((span, item["raw"]))
                yield from traces.items()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
