"""Splitting one large uncompressed JSONL file into byte ranges that whole lines never straddle.

Parallel ingest reads a big plain ``.jsonl`` file with several processes, each taking one byte
range. A range must hold whole lines only, or a record would be cut in two, so every range
boundary is moved from its nominal offset to a *line start*: just after the first newline at or
after the nominal offset (range 0 starts at byte 0). The range that holds a line's first byte owns
all of it, however long it is (an oversized line crossing a nominal offset pushes the boundary
past its end). Nominal offsets that land inside the same long line give the same boundary; the
empty ranges between them are dropped.

Line numbers must stay the file's own (quarantine entries and ``source.position`` name them), so
``count_newlines`` counts the lines of a range (one ``bytes.count`` per chunk, memory-bandwidth
fast) and the caller adds them up to get each range's first line number. ``RangeReader`` is the
file-object view a line reader consumes: it stops at the range's end.
"""

from __future__ import annotations

from typing import IO

import fsspec

#: Bytes read per step while looking for a line start or counting newlines.
SCAN_CHUNK_BYTES = 1 << 20


def file_size(uri: str) -> int:
    """The size in bytes of a local path or fsspec URL."""
    fs, path = fsspec.core.url_to_fs(uri)
    return int(fs.size(path))


def next_line_start(fh: IO[bytes], offset: int, size: int) -> int:
    """The offset just past the first newline at or after ``offset`` (``size`` when none)."""
    if offset <= 0:
        return 0
    fh.seek(offset)
    position = offset
    while position < size:
        chunk = fh.read(min(SCAN_CHUNK_BYTES, size - position))
        if not chunk:
            break
        found = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)
    return size


def line_ranges(fh: IO[bytes], size: int, nominal_offsets: list[int]) -> list[tuple[int, int]]:
    """``(start, end)`` byte ranges covering ``[0, size)`` whose boundaries are line starts.

    ``nominal_offsets`` are where ranges 1.. would start if lines did not matter (ascending).
    Every range is non-empty; together they cover the file exactly once, in order.
    """
    starts = [0]
    for offset in nominal_offsets:
        start = next_line_start(fh, max(offset, starts[-1]), size)
        if starts[-1] < start < size:
            starts.append(start)
    ends = [*starts[1:], size]
    return [(start, end) for start, end in zip(starts, ends, strict=True) if end > start]


def even_offsets(size: int, parts: int) -> list[int]:
    """The nominal offsets of ranges 1..parts-1 when ``size`` bytes are cut into ``parts``."""
    return [size * i // parts for i in range(1, parts)]


def count_newlines(uri: str, start: int, end: int) -> int:
    """How many newline bytes ``[start, end)`` of the file holds (its line count, for a range)."""
    count = 0
    with fsspec.open(uri, "rb") as fh:
        fh.seek(start)
        remaining = end - start
        while remaining > 0:
            chunk = fh.read(min(SCAN_CHUNK_BYTES, remaining))
            if not chunk:
                break
            count += chunk.count(b"\n")
            remaining -= len(chunk)
    return count


class RangeReader:
    """A read-only binary file view of ``length`` bytes of ``raw`` from its current position.

    ``tell()`` is the number of bytes read from the range so far, so a reader's byte count adds up
    to the file size over all ranges.
    """

    def __init__(self, raw: IO[bytes], length: int) -> None:
        self._raw = raw
        self._remaining = length
        self._consumed = 0

    def read(self, size: int = -1) -> bytes:
        if self._remaining <= 0:
            return b""
        want = self._remaining if size is None or size < 0 else min(size, self._remaining)
        data = self._raw.read(want)
        self._remaining -= len(data)
        self._consumed += len(data)
        if not data:
            self._remaining = 0
        return data

    def tell(self) -> int:
        return self._consumed

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return True
