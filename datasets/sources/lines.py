"""Reading JSONL lines from plain, gzip or zstd files, in bounded memory, without hiding damage.

Recorders write one JSON document per line; nightly batches arrive as ``.jsonl``, ``.jsonl.gz`` or
``.jsonl.zst``, locally or behind any fsspec URL. This module turns such a file into numbered
lines and says plainly when a line cannot be had at all:

* a line longer than ``max_line_bytes`` is never held in memory: once the pending bytes pass the
  limit they are dropped and the rest of the line is skipped up to the next newline, and one
  ``oversized_line`` event reports it (with its full length, not its text);
* a compressed stream that ends early (a recorder killed mid-write, a partial upload) yields every
  complete line decoded before the break, then one ``truncated_stream`` event at the line that was
  being read. zstd's stream reader treats a cut frame as a clean end, so frames are decoded here
  with a decompression object that can tell the two apart.

Lines are yielded as ``bytes`` (newline removed); decoding and parsing are the caller's business.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import zstandard

from golden_distill.datasets.quarantine import OVERSIZED_LINE, TRUNCATED_STREAM

#: Bytes read from the (decompressed) stream per step.
CHUNK_BYTES = 1 << 20
#: Compressed bytes fed to a decompressor per step (small: zstd output per step is unbounded).
COMPRESSED_CHUNK_BYTES = 64 * 1024


class StreamFormatError(Exception):
    """The file is not the compressed format its name says (no valid header at the start)."""


class _Truncated(Exception):
    """The compressed stream broke after it had started (internal signal)."""


@dataclass(slots=True)
class LineProblem:
    """A line that could not be read: its 1-based number, a reason code and a detail (no text)."""

    line_no: int
    reason: str
    detail: str
    raw: bytes | None = None


def compression_of(uri: str) -> str | None:
    """``"gzip"``, ``"zstd"`` or ``None`` from the file name."""
    lowered = uri.lower()
    if lowered.endswith((".gz", ".gzip")):
        return "gzip"
    if lowered.endswith((".zst", ".zstd")):
        return "zstd"
    return None


def _plain_chunks(raw: IO[bytes], size: int) -> Iterator[bytes]:
    while chunk := raw.read(size):
        yield chunk


def _gzip_chunks(raw: IO[bytes], size: int) -> Iterator[bytes]:
    # zlib directly (not GzipFile): GzipFile.read drops the data it decoded before a cut-off,
    # and max_length bounds the output of each step however well the input compresses.
    dobj = zlib.decompressobj(wbits=31)
    in_member = started = False
    while data := raw.read(COMPRESSED_CHUNK_BYTES):
        while data:
            try:
                out = dobj.decompress(data, size)
            except zlib.error as exc:
                if not started:
                    raise StreamFormatError("not a gzip stream") from exc
                raise _Truncated("corrupt gzip data") from exc
            started = in_member = True
            if out:
                yield out
            data = dobj.unconsumed_tail
            if dobj.eof:  # a member ended; another may follow (multi-member gzip)
                in_member = False
                data = dobj.unused_data
                if not data.strip(b"\0"):  # trailing zero padding is not a member
                    data = b""
                dobj = zlib.decompressobj(wbits=31)
    if in_member:
        if tail := dobj.flush():  # whatever the cut-off stream still decodes to
            yield tail
        raise _Truncated("gzip stream ended before its end marker")


def _zstd_chunks(raw: IO[bytes], size: int) -> Iterator[bytes]:
    decompressor = zstandard.ZstdDecompressor()
    dobj = decompressor.decompressobj()
    in_frame = False  # bytes of an unfinished frame have been fed
    started = False
    while data := raw.read(COMPRESSED_CHUNK_BYTES):
        while data:
            try:
                out = dobj.decompress(data)
            except zstandard.ZstdError as exc:
                if not started:
                    raise StreamFormatError("not a zstd stream") from exc
                raise _Truncated("corrupt zstd frame") from exc
            started = True
            in_frame = True
            if out:
                yield out
            data = b""
            if dobj.eof:  # a frame ended; another may follow in the same file
                in_frame = False
                data = dobj.unused_data
                dobj = decompressor.decompressobj()
    if in_frame:
        raise _Truncated("zstd stream ended inside a frame")


def iter_lines(
    raw: IO[bytes],
    compression: str | None,
    max_line_bytes: int,
    *,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[tuple[int, bytes] | LineProblem]:
    """Yield ``(line_no, line)`` for each line, or a ``LineProblem`` for one that cannot be read.

    Blank lines are yielded too (the caller decides); a final line without a newline is a line.
    Raises ``StreamFormatError`` only when the file is not in its compression format at all.
    """
    if compression == "gzip":
        chunks = _gzip_chunks(raw, chunk_bytes)
    elif compression == "zstd":
        chunks = _zstd_chunks(raw, chunk_bytes)
    else:
        chunks = _plain_chunks(raw, chunk_bytes)

    line_no = 0
    pending = b""  # start of the current, not yet terminated line
    skipped = -1  # >= 0 while skipping an oversized line: its length so far
    try:
        for chunk in chunks:
            parts = chunk.split(b"\n")
            tail = parts.pop()  # the unterminated remainder (b"" when the chunk ends in \n)
            if parts:
                first = 0
                if skipped >= 0:  # the oversized line ends in this chunk
                    line_no += 1
                    yield _oversized(line_no, skipped + len(parts[0]), max_line_bytes)
                    skipped, first = -1, 1
                elif pending:
                    parts[0] = pending + parts[0]
                    pending = b""
                for line in parts[first:] if first else parts:
                    line_no += 1
                    if len(line) > max_line_bytes:
                        yield _oversized(line_no, len(line), max_line_bytes)
                    else:
                        yield line_no, line
            if skipped >= 0:
                skipped += len(tail)
            elif len(pending) + len(tail) > max_line_bytes:
                skipped = len(pending) + len(tail)
                pending = b""
            elif tail:
                pending = pending + tail if pending else tail
    except _Truncated as exc:
        yield LineProblem(
            line_no + 1, TRUNCATED_STREAM, f"{exc}; lines before it were kept", pending or None
        )
        return
    if skipped >= 0:
        yield _oversized(line_no + 1, skipped, max_line_bytes)
    elif pending:
        yield line_no + 1, pending


def _oversized(line_no: int, length: int, limit: int) -> LineProblem:
    return LineProblem(
        line_no, OVERSIZED_LINE, f"line of {length} bytes exceeds max_line_bytes={limit}"
    )


def read_head(raw: IO[bytes], compression: str | None, size: int = 64 * 1024) -> bytes:
    """Up to ``size`` decompressed bytes from the start of a file, for format sniffing.

    A stream that breaks early gives what was decoded; one that is not its compression format
    gives ``b""`` (nothing recognisable).
    """
    if compression == "gzip":
        chunks = _gzip_chunks(raw, size)
    elif compression == "zstd":
        chunks = _zstd_chunks(raw, size)
    else:
        chunks = _plain_chunks(raw, size)
    head = b""
    try:
        for chunk in chunks:
            head += chunk
            if len(head) >= size:
                break
    except _Truncated:
        pass
    except StreamFormatError:
        return b""
    return head[:size]
