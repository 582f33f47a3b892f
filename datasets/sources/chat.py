"""Chat transcripts adapter (`--format chat`): OpenAI-style message lists with tool calls.

Two layouts:

* the tau-bench result layout: a JSON array of runs ``{task_id, trial, reward, info: {task:
  {user_id, ...}}, traj: [messages]}`` (see ../shared/realdata/README.md);
* JSONL, one transcript per line: ``{"messages": [...], ...metadata}``.

Neither carries run ids that are unique beyond one file, so the case id is derived from the
file's name inside its source (``identity.source_name``: the base name for a file directly in
its source folder, ``dt=2026-11-01/runs.jsonl`` for a partition's file) and the run's position
(``make_case_id("chat", "<name>:<position>")``): re-reading the same source gives the same ids,
and same-named files of different partitions give different ones.
Which tools write comes from the tool catalogue (``ingest.tool_catalogues``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from golden_distill.datasets.quarantine import (
    INVALID_JSON,
    MISSING_FIELD,
    NOT_AN_OBJECT,
    Quarantine,
    QuarantineEntry,
)
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.base import ReadStats, SourceError
from golden_distill.datasets.sources.case_rows import (
    RecordProblem,
    StepFinisher,
    new_case_row,
)
from golden_distill.datasets.sources.chat_transcript import TranscriptConverter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.lines import (
    LineProblem,
    compression_of,
    iter_lines,
    read_head,
)
from golden_distill.datasets.sources.source_io import (
    first_char,
    iter_json_array,
    mapped_bytes,
)
from golden_distill.datasets.sources.uris import open_binary

STAGE = "ingest"
_NATIVE_MARKERS = (b'"recordId"', b'"toolCalls"', b'"initialUserInput"')


class ChatAdapter:
    format: ClassVar[str] = "chat"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()
        finisher = StepFinisher.from_config(self.config)
        self.converter = TranscriptConverter(
            finisher,
            self.config.tool_error_patterns,
            keep_malformed=self.config.malformed_arguments == "keep_as_string",
            python_literals=self.config.malformed_arguments == "python_literal",
        )

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """A JSON array of runs with ``traj``/``messages``, or JSONL lines with ``messages``."""
        start = first_char(head)
        if start == b"[":
            return b'"traj"' in head or b'"messages"' in head
        if start == b"{":
            first_line = head.lstrip().split(b"\n", 1)[0]
            if b'"resourceSpans"' in first_line or any(m in first_line for m in _NATIVE_MARKERS):
                return False
            return b'"messages"' in first_line
        return False

    def read(
        self, uri: str, quarantine: Quarantine, stats: ReadStats, name: str = ""
    ) -> Iterator[dict[str, Any]]:
        in_source = name or posixpath.basename(uri.rstrip("/")) or uri
        with open_binary(uri) as raw:
            head = read_head(raw, compression_of(uri), 4096)
        kept_before = self.converter.malformed_kept
        literals_before = self.converter.literals_read
        if first_char(head) == b"[":
            yield from self._read_array(uri, in_source, quarantine, stats)
        elif first_char(head) == b"{":
            yield from self._read_jsonl(uri, in_source, quarantine, stats)
        elif head.strip():
            raise SourceError(f"{uri}: not a chat transcript file (expected a JSON array or JSONL)")
        literals = self.converter.literals_read - literals_before
        if literals:
            stats.extra["python_literal_arguments"] = (
                stats.extra.get("python_literal_arguments", 0) + literals
            )
        kept = self.converter.malformed_kept - kept_before
        if kept:
            stats.extra["malformed_arguments_kept"] = (
                stats.extra.get("malformed_arguments_kept", 0) + kept
            )

    def _read_array(
        self, uri: str, in_source: str, quarantine: Quarantine, stats: ReadStats
    ) -> Iterator[dict[str, Any]]:
        with mapped_bytes(uri) as data:
            stats.bytes_read += len(data)
            for item in iter_json_array(data):
                stats.records_read += 1
                if item.problem is not None:
                    detail = "array element"
                    self._reject(quarantine, uri, item.index, item.problem, detail, item.raw)
                    continue
                row = self._convert(uri, in_source, item.index, item.raw, quarantine)
                if row is not None:
                    stats.cases += 1
                    yield row

    def _read_jsonl(
        self, uri: str, in_source: str, quarantine: Quarantine, stats: ReadStats
    ) -> Iterator[dict[str, Any]]:
        """Lines read in bounded memory (oversized and truncated lines reported, not held)."""
        limit = self.config.max_line_bytes
        with open_binary(uri) as raw:
            for item in iter_lines(raw, compression_of(uri), limit):
                if isinstance(item, LineProblem):
                    stats.records_read += 1
                    self._reject(quarantine, uri, item.line_no, item.reason, item.detail, item.raw)
                    continue
                number, line = item
                stats.bytes_read += len(line) + 1
                if not line.strip():
                    continue
                stats.records_read += 1
                row = self._convert(uri, in_source, number, line, quarantine)
                if row is not None:
                    stats.cases += 1
                    yield row

    def _convert(
        self, uri: str, in_source: str, position: int, raw: bytes, quarantine: Quarantine
    ) -> dict[str, Any] | None:
        case_id = make_case_id("chat", f"{in_source}:{position}")
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self._reject(quarantine, uri, position, INVALID_JSON, "not valid JSON", raw)
            return None
        try:
            if not isinstance(record, dict):
                raise RecordProblem(NOT_AN_OBJECT, "run is not a JSON object")
            messages, meta, record_id = _layout(record)
            row = new_case_row(case_id, "chat", uri, position, record_id)
            self.converter.fill(row, messages, meta)
        except RecordProblem as problem:
            self._reject(quarantine, uri, position, problem.reason, problem.detail, raw, case_id)
            return None
        if row["trace_id"] is None:
            row["trace_id"] = record_id or f"{in_source}:{position}"
        return row

    @staticmethod
    def _reject(
        quarantine: Quarantine,
        uri: str,
        position: int,
        reason: str,
        detail: str,
        raw: bytes | None,
        case_id: str | None = None,
    ) -> None:
        quarantine.add(QuarantineEntry(STAGE, reason, uri, position, detail, case_id, raw))


def _layout(record: dict[str, Any]) -> tuple[Any, dict[str, Any], str | None]:
    """(messages, metadata, source record id) for a tau-bench run or a JSONL transcript."""
    if "traj" in record:
        meta: dict[str, Any] = {k: v for k, v in record.items() if k not in ("traj", "info")}
        info = record.get("info")
        task = info.get("task") if isinstance(info, dict) else None
        if isinstance(task, dict) and task.get("user_id") is not None:
            meta.setdefault("user_id", task["user_id"])
        if isinstance(task, dict):
            meta["task"] = task  # its actions and outputs are the case's expected outcome
        record_id = None
        if record.get("task_id") is not None:
            record_id = f"task={record['task_id']}/trial={record.get('trial')}"
        return record["traj"], meta, record_id
    if "messages" in record:
        meta = {k: v for k, v in record.items() if k != "messages"}
        ident = meta.get("id", meta.get("trace_id"))
        return record["messages"], meta, None if ident is None else str(ident)
    raise RecordProblem(MISSING_FIELD, "run has neither `traj` nor `messages`")
