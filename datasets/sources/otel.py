"""OpenTelemetry GenAI adapter (`--format otel`): OTLP JSON trace exports -> one case per trace.

Reads a file holding one OTLP/JSON ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``)
or, as the collector's file exporter writes, one such request per line (JSONL; ``.gz``/``.zst``
fine). Spans are grouped by trace id across the whole file (a trace's spans may arrive in several
requests), so memory grows with the file: collectors rotate their export files, and each file is
read on its own. A span without a trace id is quarantined; its trace-mates are not affected.
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
from golden_distill.datasets.sources.otel_spans import (
    Span,
    TraceCaseBuilder,
    attributes,
    parse_span,
)
from golden_distill.datasets.sources.source_io import first_char, read_bytes
from golden_distill.datasets.sources.tool_catalogue import load_tool_catalogue

STAGE = "ingest"


class OtelAdapter:
    format: ClassVar[str] = "otel"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()
        finisher = StepFinisher(
            load_tool_catalogue(self.config.tool_catalogues),
            self.config.handoff_tools,
            self.config.volatile_keys,
        )
        self.builder = TraceCaseBuilder(
            finisher, keep_malformed=self.config.malformed_arguments == "keep_as_string"
        )

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """An OTLP JSON export: a JSON object with ``resourceSpans`` near its start."""
        return first_char(head) == b"{" and b'"resourceSpans"' in head[:4096]

    def read(self, uri: str, quarantine: Quarantine, stats: ReadStats) -> Iterator[dict[str, Any]]:
        data = read_bytes(uri)
        stats.bytes_read += len(data)
        traces: dict[str, list[tuple[Span, Any]]] = {}
        spans = 0
        for line_no, doc in self._documents(uri, data, quarantine):
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
                traces.setdefault(span.trace_id, []).append((span, raw))
        stats.extra["spans"] = stats.extra.get("spans", 0) + spans
        for position, (trace_id, members) in enumerate(traces.items(), start=1):
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
        self, uri: str, data: bytes, quarantine: Quarantine
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """(line number, request) for a single JSON document or JSONL of requests."""
        try:
            whole = orjson.loads(data)
        except orjson.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            yield 1, whole
            return
        for line_no, line in enumerate(data.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                doc = orjson.loads(line)
            except orjson.JSONDecodeError:
                quarantine.add(
                    QuarantineEntry(STAGE, INVALID_JSON, uri, line_no, "not valid JSON", None, line)
                )
                continue
            if not isinstance(doc, dict):
                detail = "not an OTLP export object"
                quarantine.add(
                    QuarantineEntry(STAGE, NOT_AN_OBJECT, uri, line_no, detail, None, line)
                )
                continue
            yield line_no, doc


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
