"""The JSONL line reader: chunk boundaries, oversized lines, a last line without newline."""

from __future__ import annotations

import gzip
import io

import pytest

from golden_distill.datasets.sources.lines import LineProblem, iter_lines, read_head


def _read(data: bytes, limit: int, chunk: int, compression: str | None = None) -> list:
    return list(iter_lines(io.BytesIO(data), compression, limit, chunk_bytes=chunk))


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 4096])
def test_lines_survive_any_chunk_boundary(chunk: int) -> None:
    data = b"a\nbb\n\nccc\r\nlast"
    assert _read(data, 100, chunk) == [(1, b"a"), (2, b"bb"), (3, b""), (4, b"ccc\r"), (5, b"last")]


@pytest.mark.parametrize("chunk", [2, 5, 16, 4096])
def test_oversized_lines_are_reported_with_their_length_and_skipped(chunk: int) -> None:
    data = b"ok\n" + b"x" * 40 + b"\nfine\n" + b"y" * 25
    items = _read(data, 10, chunk)
    assert items[0] == (1, b"ok") and items[2] == (3, b"fine")
    for item, (line_no, length) in zip((items[1], items[3]), ((2, 40), (4, 25)), strict=True):
        assert isinstance(item, LineProblem)
        assert (item.line_no, item.reason, item.raw) == (line_no, "oversized_line", None)
        assert f"line of {length} bytes" in item.detail


def test_a_line_at_the_limit_is_kept() -> None:
    assert _read(b"x" * 10 + b"\n", 10, 3) == [(1, b"x" * 10)]


def test_read_head_decompresses_and_tolerates_a_cut() -> None:
    data = b"".join(b'{"n": %d}\n' % i for i in range(1000))
    packed = gzip.compress(data)
    assert read_head(io.BytesIO(packed), "gzip", 100) == data[:100]
    assert read_head(io.BytesIO(b"not gzip at all"), "gzip") == b""
    assert data.startswith(read_head(io.BytesIO(packed[: len(packed) // 2]), "gzip"))
