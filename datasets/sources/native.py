"""Native recordings adapter (`--format native`): camelCase JSONL as production recorders write it.

``.jsonl``, ``.jsonl.gz`` and ``.jsonl.zst`` files, locally or behind any fsspec URL, one
recording per line (the shape in docs/architecture.md). Reading streams: lines come from
``lines.iter_lines`` in 1 MiB chunks, are decoded by msgspec into the typed structs of
``native_shape`` (type checks in C, JSON values kept as their recorded bytes), gathered into
batches of ``batch_rows`` and turned into Arrow record batches column by column by
``NativeConverter``, so memory stays flat however large the file. Lines msgspec refuses go to
the generic parser once more, so the quarantine reasons mean what they always meant.

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
import msgspec
import orjson
import pyarrow as pa

from golden_distill.datasets.quarantine import (
    ENCODING_ERROR,
    INVALID_JSON,
    MISSING_FIELD,
    NOT_AN_OBJECT,
    WRONG_TYPE,
    Quarantine,
    QuarantineEntry,
)
from golden_distill.datasets.sources.base import ReadStats, SourceError
from golden_distill.datasets.sources.case_batch import BUILD_ERRORS
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.lines import (
    LineProblem,
    StreamFormatError,
    compression_of,
    iter_lines,
)
from golden_distill.datasets.sources.native_record import (
    NativeConverter,
    RecordError,
    record_error,
)
from golden_distill.datasets.sources.native_shape import DECODER, Recording
from golden_distill.datasets.sources.uris import display_uri

STAGE = "ingest"
_BOM = b"\xef\xbb\xbf"
#: A line that starts like a native recording (checked on the first lines of a file).
_MARKERS = (b'"recordId"', b'"toolCalls"')
#: Anything msgspec raises for a line that is not a valid recording (recursion: deep nesting).
_DECODE_ERRORS = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)
_BUILD_FAILURES = (RecordError, *BUILD_ERRORS)
#: A batch is cut early past this many line bytes: bounded memory, and every JSON text column
#: of a batch stays far below Arrow's 2 GiB limit for one string array.
_MAX_BATCH_BYTES = 256 * 1024 * 1024


class NativeAdapter:
    format: ClassVar[str] = "native"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """JSON-object lines carrying ``recordId`` and ``toolCalls`` in the first few lines."""
        lines = [ln for ln in head.lstrip(_BOM).split(b"\n")[:20] if ln.strip()]
        return any(ln.lstrip()[:1] == b"{" and all(m in ln for m in _MARKERS) for ln in lines[:10])

    def read(
        self, uri: str, quarantine: Quarantine, stats: ReadStats, name: str = ""
    ) -> Iterator[dict[str, Any]]:
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
        converter = NativeConverter(uri, config.volatile_keys)
        decode = DECODER.decode
        batch_rows = config.batch_rows
        records: list[Recording] = []
        line_nos: list[int] = []
        lines: list[bytes] = []  # kept for the quarantine, should a record fail in its batch
        lines_seen = batch_bytes = 0
        rejected = False  # a line was rejected since the last accepted one (the streak runs)

        def reject(line_no: int, reason: str, detail: str, raw_line: bytes | None) -> None:
            nonlocal rejected
            rejected = True
            quarantine.add(QuarantineEntry(STAGE, reason, uri, line_no, detail, raw=raw_line))

        def finish() -> pa.RecordBatch:
            batch = self._finish(converter, records, line_nos, lines, reject)
            stats.cases += batch.num_rows
            return batch

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
                    record = decode(line)
                    if not line.isascii():
                        # msgspec checks UTF-8 only in the strings it decodes, not in the
                        # bytes it skips or keeps raw: a line is whole UTF-8 or rejected
                        line.decode()
                except _DECODE_ERRORS:
                    record = _decode_again(line, line_no, reject)
                    if record is None:
                        continue
                if not record.record_id:
                    reject(line_no, MISSING_FIELD, "recordId (empty)", line)
                    continue
                if rejected:  # a run of rejected lines ends here
                    quarantine.accepted()
                    rejected = False
                records.append(record)
                line_nos.append(line_no)
                lines.append(line)
                batch_bytes += len(line)
                if len(records) >= batch_rows or batch_bytes >= _MAX_BATCH_BYTES:
                    stats.records_read += lines_seen
                    lines_seen = batch_bytes = 0
                    yield finish()
                    records, line_nos, lines = [], [], []
        except StreamFormatError as exc:
            raise SourceError(f"{display_uri(uri)}: {exc}") from None
        finally:
            stats.records_read += lines_seen
        if records:
            yield finish()

    @staticmethod
    def _finish(
        converter: NativeConverter,
        records: list[Recording],
        line_nos: list[int],
        lines: list[bytes],
        reject: Any,
    ) -> pa.RecordBatch:
        """The batch of ``records``; those that cannot become cases are quarantined instead.

        A failing batch is split in halves until the failing records stand alone, so a bad
        record costs a few extra builds of its neighbours, never the batch.
        """
        try:
            return converter.build(records, line_nos)
        except _BUILD_FAILURES:
            pass
        bad: list[int] = []
        _find_bad(converter, records, line_nos, 0, len(records), bad, reject, lines)
        good = sorted(set(range(len(records))) - set(bad))
        return converter.build([records[i] for i in good], [line_nos[i] for i in good])


def _find_bad(
    converter: NativeConverter,
    records: list[Recording],
    line_nos: list[int],
    start: int,
    end: int,
    bad: list[int],
    reject: Any,
    lines: list[bytes],
) -> None:
    """Quarantine every record in ``records[start:end]`` (which fails to build) that fails."""
    if end - start == 1:
        try:
            converter.build(records[start:end], line_nos[start:end])
        except RecordError as err:
            reject(line_nos[start], err.reason, err.detail, lines[start])
        except BUILD_ERRORS:
            detail = "a value does not fit the canonical schema (out of range?)"
            reject(line_nos[start], WRONG_TYPE, detail, lines[start])
        else:
            return
        bad.append(start)
        return
    middle = (start + end) // 2
    for lo, hi in ((start, middle), (middle, end)):
        try:
            converter.build(records[lo:hi], line_nos[lo:hi])
        except _BUILD_FAILURES:
            _find_bad(converter, records, line_nos, lo, hi, bad, reject, lines)


def _decode_again(line: bytes, line_no: int, reject: Any) -> Recording | None:
    """The recording on a line msgspec refused, or ``None`` once it is quarantined."""
    problem = _line_problem(line)
    if problem is not None:
        reject(line_no, *problem, line)
        return None
    try:  # a valid JSON object: a BOM-prefixed line, or one that does not fit the shape
        return DECODER.decode(line.removeprefix(_BOM))
    except msgspec.ValidationError as exc:
        err = record_error(exc)
        reject(line_no, err.reason, err.detail, line)
    except _DECODE_ERRORS:  # what orjson reads but msgspec not (nesting depth)
        reject(line_no, INVALID_JSON, "not JSON this reader can decode", line)
    return None


def _line_problem(line: bytes) -> tuple[str, str] | None:
    """Why a line msgspec refused is not a JSON object at all (reason, detail), else ``None``.

    The error path only: the generic parser decides, so ``invalid_json``, ``encoding_error`` and
    ``not_an_object`` mean what they always meant (and a line with both a type error and a
    syntax error is ``invalid_json``). A leading BOM is tolerated.
    """
    body = line.removeprefix(_BOM)
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as bad:
            return ENCODING_ERROR, f"not valid UTF-8 (at byte {bad.start})"
        return INVALID_JSON, f"not valid JSON (at character {exc.pos})"
    if type(value) is not dict:
        return NOT_AN_OBJECT, "a JSON value that is not an object"
    return None
