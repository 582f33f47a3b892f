"""Native recordings adapter (`--format native`): camelCase JSONL as production recorders write it.

``.jsonl``, ``.jsonl.gz`` and ``.jsonl.zst`` files, locally or behind any fsspec URL, one
recording per line (the shape in docs/architecture.md). Reading streams: lines come from
``lines.iter_lines`` in 1 MiB chunks, are converted by ``NativeConverter`` and leave as Arrow
record batches of ``batch_rows`` cases, so memory stays flat however large the file.

Every line that cannot become a case is quarantined with its file, line number and one reason:
``invalid_json``, ``encoding_error`` (not UTF-8), ``not_an_object``, ``missing_field``,
``wrong_type`` (the detail names the field path), ``oversized_line`` or ``truncated_stream``.
Details and logs never carry record text; the raw line goes only to the quarantine file (whose
access class is the source's) unless ``keep_raw`` is off there. Blank lines are skipped.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import fsspec
import orjson
import pyarrow as pa

from golden_distill.datasets.quarantine import (
    ENCODING_ERROR,
    INVALID_JSON,
    NOT_AN_OBJECT,
    WRONG_TYPE,
    Quarantine,
    QuarantineEntry,
)
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.base import ReadStats, SourceError
from golden_distill.datasets.sources.case_batch import build_batch_checked
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.lines import (
    LineProblem,
    StreamFormatError,
    compression_of,
    iter_lines,
)
from golden_distill.datasets.sources.native_record import NativeConverter, RecordError
from golden_distill.datasets.sources.uris import display_uri

STAGE = "ingest"
_BOM = b"\xef\xbb\xbf"
#: A line that starts like a native recording (checked on the first lines of a file).
_MARKERS = (b'"recordId"', b'"toolCalls"')


class NativeAdapter:
    format: ClassVar[str] = "native"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """JSON-object lines carrying ``recordId`` and ``toolCalls`` in the first few lines."""
        lines = [ln for ln in head.lstrip(_BOM).split(b"\n")[:20] if ln.strip()]
        return any(ln.lstrip()[:1] == b"{" and all(m in ln for m in _MARKERS) for ln in lines[:10])

    def read(self, uri: str, quarantine: Quarantine, stats: ReadStats) -> Iterator[dict[str, Any]]:
        """Canonical case rows as dicts (the adapter protocol); ``read_batches`` is faster."""
        for batch in self.read_batches(uri, quarantine, stats):
            yield from batch.to_pylist()

    def read_batches(
        self, uri: str, quarantine: Quarantine, stats: ReadStats
    ) -> Iterator[pa.RecordBatch]:
        """Canonical cases as Arrow record batches of at most ``batch_rows`` rows."""
        try:
            raw = fsspec.open(uri, "rb").open()
        except FileNotFoundError:
            raise SourceError(f"{display_uri(uri)}: no such file") from None
        except (OSError, ValueError) as exc:
            raise SourceError(f"{display_uri(uri)}: cannot open ({type(exc).__name__})") from None
        # The cyclic GC rescans the buffered cases on every collection (~10% of the read time);
        # they hold no cycles, so it pauses while a file streams. Only on the main thread: a
        # worker thread must not change how a whole process (e.g. a Prefect worker) collects.
        pause_gc = gc.isenabled() and threading.current_thread() is threading.main_thread()
        if pause_gc:
            gc.disable()
        try:
            with raw:
                yield from self._batches(uri, raw, quarantine, stats)
                stats.bytes_read += raw.tell() if raw.seekable() else 0
        finally:
            if pause_gc:
                gc.enable()

    def _batches(
        self, uri: str, raw: Any, quarantine: Quarantine, stats: ReadStats
    ) -> Iterator[pa.RecordBatch]:
        config = self.config
        convert = NativeConverter(uri, config.volatile_keys).convert
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        batch_rows = config.batch_rows
        rows: list[tuple[Any, ...]] = []
        lines_seen = 0

        def reject(line_no: int, reason: str, detail: str, raw_line: bytes | None) -> None:
            quarantine.add(QuarantineEntry(STAGE, reason, uri, line_no, detail, raw=raw_line))

        try:
            items = iter_lines(raw, compression_of(uri), config.max_line_bytes)
            for item in items:
                if type(item) is LineProblem:
                    lines_seen += 1
                    reject(item.line_no, item.reason, item.detail, item.raw)
                    continue
                line_no, line = item
                if not line or line.isspace():
                    continue
                lines_seen += 1
                try:
                    record = loads(line)
                except decode_error as exc:
                    record = _retry_or_reject(line, line_no, exc, reject)
                    if record is None:
                        continue
                if type(record) is not dict:
                    reject(line_no, NOT_AN_OBJECT, "a JSON value that is not an object", line)
                    continue
                try:
                    rows.append(convert(record, line_no))
                except RecordError as err:
                    reject(line_no, err.reason, err.detail, line)
                    continue
                if len(rows) >= batch_rows:
                    stats.records_read += lines_seen
                    lines_seen = 0
                    yield self._finish(rows, uri, quarantine, stats)
                    rows = []
        except StreamFormatError as exc:
            raise SourceError(f"{display_uri(uri)}: {exc}") from None
        finally:
            stats.records_read += lines_seen
        if rows:
            yield self._finish(rows, uri, quarantine, stats)

    @staticmethod
    def _finish(
        rows: list[tuple[Any, ...]], uri: str, quarantine: Quarantine, stats: ReadStats
    ) -> pa.RecordBatch:
        batch, bad = build_batch_checked(rows)
        for index in bad:
            row = rows[index]
            quarantine.add(
                QuarantineEntry(
                    STAGE,
                    WRONG_TYPE,
                    uri,
                    row[-2],  # source.position
                    "a value does not fit the canonical schema (out of range?)",
                    case_id=make_case_id("native", row[-1]),
                )
            )
        stats.cases += batch.num_rows
        return batch


def _retry_or_reject(line: bytes, line_no: int, exc: orjson.JSONDecodeError, reject: Any) -> Any:
    """Parse a line orjson refused once more if it starts with a BOM; else quarantine it."""
    if line.startswith(_BOM):
        try:
            return orjson.loads(line[len(_BOM) :])
        except orjson.JSONDecodeError as again:
            exc = again
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        reject(line_no, ENCODING_ERROR, f"not valid UTF-8 (at byte {bad.start})", line)
        return None
    reject(line_no, INVALID_JSON, f"not valid JSON (at character {exc.pos})", line)
    return None
