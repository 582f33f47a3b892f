"""OpenTelemetry GenAI adapter (`--format otel`): OTLP JSON trace exports -> one case per trace.

Reads a file holding one OTLP/JSON ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``,
parsed whole) or, as the collector's file exporter writes, one such request per line (JSONL,
streamed line by line; ``.gz``/``.zst`` fine; a line may be up to 32x ``max_line_bytes`` since
one request carries a whole batch of spans). Spans are grouped by trace id across the whole file
(a trace's spans may arrive in several requests): up to ``otel_max_spans_in_memory`` spans in
memory, beyond that spilled to hash buckets on disk (``otel_grouping``), so a large export costs
disk, not memory. A span without a trace id is quarantined; its trace-mates are not affected.
``case_id = make_case_id("otel", trace_id)``. A record is a trace (``records_read`` counts traces
plus unusable spans; ``extra["spans"]`` counts spans).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from golden_distill.datasets.quarantine import (
    INVALID_JSON,
    NOT_AN_OBJECT,
    Quarantine,
    QuarantineEntry,
)
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.case_rows import RecordProblem, StepFinisher
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.lines import LineProblem, compression_of, iter_lines
from golden_distill.datasets.sources.otel_grouping import SpanGrouper
from golden_distill.datasets.sources.otel_spans import TraceCaseBuilder, attributes, parse_span
from golden_distill.datasets.sources.source_io import first_char, read_bytes
from golden_distill.datasets.sources.uris import open_binary

STAGE = "ingest"


class OtelAdapter:
    format: ClassVar[str] = "otel"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()
        finisher = StepFinisher.from_config(self.config)
        self.builder = TraceCaseBuilder(
            finisher,
            keep_malformed=self.config.malformed_arguments == "keep_as_string",
            python_literals=self.config.malformed_arguments == "python_literal",
        )

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """An OTLP JSON export: a JSON object with ``resourceSpans`` near its start."""
        return first_char(head) == b"{" and b'"resourceSpans"' in head[:4096]

    def read(
        self, uri: str, quarantine: Quarantine, stats: ReadStats, name: str = ""
    ) -> Iterator[dict[str, Any]]:
        grouper = SpanGrouper(self.config.otel_max_spans_in_memory)
        spans = 0
        rejected = quarantine.total  # a span read after rejected ones ends their run
        for line_no, doc in self._documents(uri, quarantine, stats):
            for where, raw, resource in _raw_spans(doc):
                spans += 1
                try:
                    span = parse_span(raw, resource, where)
                except RecordProblem as problem:
                    stats.records_read += 1  # a span no trace can claim is a record on its own
                    quarantine.add(
                        QuarantineEntry(
                            STAGE, problem.reason, uri, line_no, problem.detail, None, _dump(raw)
                        )
                    )
                    continue
                if quarantine.total != rejected:
                    quarantine.accepted()
                    rejected = quarantine.total
                grouper.add(span, raw, where)
        stats.extra["spans"] = stats.extra.get("spans", 0) + spans
        if grouper.spilled:
            stats.extra["otel_spilled_files"] = stats.extra.get("otel_spilled_files", 0) + 1
        for position, (trace_id, members) in enumerate(grouper.groups(), start=1):
            stats.records_read += 1
            try:
                row = self.builder.build(trace_id, [s for s, _ in members], uri, position)
            except RecordProblem as problem:
                quarantine.add(
                    QuarantineEntry(
                        STAGE,
                        problem.reason,
                        uri,
                        position,
                        f"trace {trace_id}: {problem.detail}",
                        None,
                        _dump([raw for _, raw in members]),
                    )
                )
                continue
            stats.cases += 1
            yield row

    def _documents(
        self, uri: str, quarantine: Quarantine, stats: ReadStats
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, request): JSONL streamed line by line, else one whole document.

        It is JSONL when one of the first two non-blank lines is a whole JSON object (a
        pretty-printed document's first lines are fragments).
        """
        if not self._looks_like_jsonl(uri):
            yield from self._whole_document(uri, quarantine, stats)
            return
        with open_binary(uri) as raw:
            for item in iter_lines(raw, compression_of(uri), self.config.max_line_bytes * 32):
                if isinstance(item, LineProblem):
                    entry = QuarantineEntry(
                        STAGE, item.reason, uri, item.line_no, item.detail, None, item.raw
                    )
                    quarantine.add(entry)
                    continue
                line_no, line = item
                stats.bytes_read += len(line) + 1
                if not line.strip():
                    continue
                doc, reason = _parse_request(line)
                if doc is None:
                    detail = "not valid JSON" if reason == INVALID_JSON else "not an OTLP object"
                    quarantine.add(QuarantineEntry(STAGE, reason, uri, line_no, detail, None, line))
                    continue
                yield line_no, doc

    def _looks_like_jsonl(self, uri: str) -> bool:
        limit = self.config.max_line_bytes * 32
        seen = 0
        with open_binary(uri) as raw:
            for item in iter_lines(raw, compression_of(uri), limit):
                if isinstance(item, LineProblem) or not item[1].strip():
                    continue
                if _parse_request(item[1])[0] is not None:
                    return True
                seen += 1
                if seen == 2:
                    return False
        return False

    def _whole_document(
        self, uri: str, quarantine: Quarantine, stats: ReadStats
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        data = read_bytes(uri)
        stats.bytes_read += len(data)
        doc, reason = _parse_request(data)
        if doc is None:
            detail = "not valid JSON" if reason == INVALID_JSON else "not an OTLP object"
            quarantine.add(QuarantineEntry(STAGE, reason, uri, 1, detail, None, data))
            return
        yield 1, doc


def _parse_request(text: bytes) -> tuple[dict[str, Any] | None, str]:
    """(request, "") or (None, reason) for one OTLP JSON export request."""
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None, INVALID_JSON
    return (doc, "") if isinstance(doc, dict) else (None, NOT_AN_OBJECT)


def _raw_spans(doc: dict[str, Any]) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """(location, raw span, resource attributes) for every span of one export request."""
    for r, resource_spans in enumerate(_list(doc.get("resourceSpans"))):
        if not isinstance(resource_spans, dict):
            continue
        resource = resource_spans.get("resource")
        resource_attrs = attributes(
            resource.get("attributes") if isinstance(resource, dict) else None
        )
        for s, scope_spans in enumerate(_list(resource_spans.get("scopeSpans"))):
            if not isinstance(scope_spans, dict):
                continue
            for i, raw in enumerate(_list(scope_spans.get("spans"))):
                yield f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]", raw, resource_attrs


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dump(value: Any) -> bytes:
    return orjson.dumps(value, default=str)
