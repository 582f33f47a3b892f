"""Writing recording shards deterministically: plain JSONL, gzip or zstd, and cutting one short.

Same input, same bytes: gzip is written through zlib with a fixed level (the header zlib writes
carries mtime 0 and no file name), zstd through one single-threaded compressor at a fixed level.
Lines are buffered and compressed in blocks for speed; the buffer is bounded, so memory is too.

A *truncated stream* is planted by flushing the compressor to a block boundary (everything
written so far decodes completely), compressing one sacrificial line, and keeping only one or two
bytes past that boundary: a reader decodes every earlier line intact and then meets the end of
the file inside a block with no end-of-stream marker. Readers must check for that marker
(gzip raises EOFError; python-zstandard's stream reader stays silent unless the caller checks
that the frame ended).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import IO

import zstandard

GZIP_LEVEL = 1
ZSTD_LEVEL = 3
_BLOCK = 1 << 20
SUFFIX = {None: ".jsonl", "gz": ".jsonl.gz", "zst": ".jsonl.zst"}


def shard_name(index: int, compress: str | None) -> str:
    return f"recordings-{index:04d}{SUFFIX[compress]}"


class _Compressor:
    """A minimal common face over zlib (gzip container) and zstandard compressobj."""

    def __init__(self, compress: str | None) -> None:
        self.kind = compress
        if compress == "gz":
            self._z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
        elif compress == "zst":
            self._z = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compressobj()

    def compress(self, data: bytes) -> bytes:
        return data if self.kind is None else self._z.compress(data)

    def sync(self) -> bytes:
        if self.kind == "gz":
            return self._z.flush(zlib.Z_FULL_FLUSH)
        if self.kind == "zst":
            return self._z.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        return b""

    def finish(self) -> bytes:
        return b"" if self.kind is None else self._z.flush()


class ShardStream:
    """One output file: counts lines (1-based numbers are what the truth reports)."""

    def __init__(self, path: Path, compress: str | None) -> None:
        self.path = path
        self.compress = compress
        self._fh: IO[bytes] = path.open("wb")
        self._c = _Compressor(compress)
        self._buf: list[bytes] = []
        self._buf_len = 0
        self.lines = 0
        self.bytes_out = 0

    def write_line(self, line: bytes) -> int:
        """Append one line (without its newline); returns its 1-based line number."""
        self._buf.append(line)
        self._buf.append(b"\n")
        self._buf_len += len(line) + 1
        self.lines += 1
        if self._buf_len >= _BLOCK:
            self._drain()
        return self.lines

    def _drain(self) -> None:
        if self._buf:
            self._emit(self._c.compress(b"".join(self._buf)))
            self._buf.clear()
            self._buf_len = 0

    def _emit(self, data: bytes) -> None:
        if data:
            self._fh.write(data)
            self.bytes_out += len(data)

    def close(self) -> None:
        self._drain()
        self._emit(self._c.finish())
        self._fh.close()

    def close_truncated(self, sacrificial: bytes) -> int:
        """End the file inside a block holding ``sacrificial``; returns that line's number."""
        if self.compress is None:
            raise ValueError("a plain JSONL file cannot hold a truncated compressed stream")
        self._drain()
        self._emit(self._c.sync())
        tail = self._c.compress(sacrificial + b"\n") + self._c.finish()
        keep = 1 if self.compress == "gz" else 2
        self._emit(tail[:keep])
        self._fh.close()
        self.lines += 1
        return self.lines
