"""Opening source URIs and splitting JSON documents into records, for the chat and OTel adapters.

Paths and fsspec URLs (``s3://``, ``memory://``...) open the same way, with compression inferred
from the name (``.gz``, ``.zst``). A JSON array of runs (the tau-bench layout) is split into its
elements by a scanner that only tracks strings and brackets, so one malformed element is
quarantined on its own and the rest still read; a truncated file loses only its last element.
"""

from __future__ import annotations

import mmap
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

import fsspec
import zstandard

from golden_distill.datasets.sources.base import SourceError

# A JSON string literal (escapes included) or a bracket; everything else is skipped.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_GAP_CHARS = b" \t\r\n,"
_LEAD = re.compile(rb"(?:\xef\xbb\xbf)?\s*")


def open_uri(uri: str) -> IO[bytes]:
    """A binary file object for a path or fsspec URL, decompressing by file extension."""
    try:
        return fsspec.open(uri, "rb", compression="infer").open()
    except FileNotFoundError:
        raise SourceError(f"{uri}: no such file") from None
    except (OSError, ValueError) as exc:
        raise SourceError(f"{uri}: cannot open ({type(exc).__name__})") from None


def read_bytes(uri: str) -> bytes:
    """The whole (decompressed) content; a broken compressed stream is a ``SourceError``."""
    with open_uri(uri) as fh:
        try:
            return fh.read()
        except (EOFError, zlib.error, OSError, zstandard.ZstdError) as exc:
            raise SourceError(
                f"{uri}: compressed stream is truncated or corrupt ({type(exc).__name__})"
            ) from None


def first_char(head: bytes) -> bytes:
    """The first non-whitespace byte of ``head`` (after a UTF-8 BOM), or b''."""
    stripped = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return stripped[:1]


@dataclass(slots=True)
class ArrayItem:
    index: int  # 1-based position in the array
    raw: bytes
    problem: str | None = None  # None, "not_an_object" or "truncated_stream"


def iter_json_array(data: bytes | mmap.mmap, start: int = 0) -> Iterator[ArrayItem]:
    """The top-level elements of a JSON array, as raw bytes, without parsing the whole document.

    ``data`` may be a memory map of a local file, so a large array is paged in by the OS rather
    than held in process memory. ``start``: the array begins there (an array inside a larger
    document, ``top_level_values``); it ends at its closing bracket.

    Raises ``ValueError`` when ``data`` does not start with ``[`` (at ``start``).
    """
    lead = _LEAD.match(data, start)
    start_at = lead.end() if lead else start
    if data[start_at : start_at + 1] != b"[":
        raise ValueError("not a JSON array")
    depth, index, element_start, last_end = 0, 0, -1, start_at + 1
    for match in _TOKEN.finditer(data, start_at + 1):
        token = match.group()
        if token[:1] == b'"':
            if depth == 0:  # a bare string element
                index += 1
                yield ArrayItem(index, token, "not_an_object")
                last_end = match.end()
            continue
        if token in (b"{", b"["):
            if depth == 0:
                gap = data[last_end : match.start()].strip(_GAP_CHARS)
                if gap:
                    index += 1
                    yield ArrayItem(index, gap, "not_an_object")
                element_start = match.start()
            depth += 1
            continue
        depth -= 1
        if depth == 0:
            index += 1
            raw = data[element_start : match.end()]
            yield ArrayItem(index, raw, None if token == b"}" else "not_an_object")
            last_end = match.end()
        elif depth < 0:  # the array's own closing bracket
            gap = data[last_end : match.start()].strip(_GAP_CHARS)
            if gap:
                index += 1
                yield ArrayItem(index, gap, "not_an_object")
            return
    if depth > 0:
        index += 1
        yield ArrayItem(index, data[element_start:], "truncated_stream")
    else:
        gap = data[last_end:].strip(_GAP_CHARS)
        index += 1
        yield ArrayItem(index, gap, "truncated_stream")


@contextmanager
def mapped_bytes(uri: str) -> Iterator[bytes | mmap.mmap]:
    """A read-only memory map of a plain local file, else the whole (decompressed) content."""
    path = uri.removeprefix("file://")
    local_plain = "://" not in path and not path.endswith((".gz", ".zst", ".bz2", ".xz"))
    if local_plain and os.path.isfile(path) and os.path.getsize(path) > 0:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            yield mm
        return
    yield read_bytes(uri)


def top_level_values(data: bytes | mmap.mmap) -> dict[str, tuple[int, int]]:
    """``{key: (start, end)}`` of each value of a top-level JSON object, by one scan of its
    strings and brackets (nothing parsed): so a reader parses the small members whole and
    streams a large array member with ``iter_json_array(data, start)``. A member cut off by
    the end of the data ends there. Raises ``ValueError`` when ``data`` is not an object."""
    lead = _LEAD.match(data)
    at = lead.end() if lead else 0
    if data[at : at + 1] != b"{":
        raise ValueError("not a JSON object")
    values: dict[str, tuple[int, int]] = {}
    depth, key, value_start = 0, None, -1
    for match in _TOKEN.finditer(data, at):
        token = match.group()
        if token[:1] == b'"':
            if depth != 1:
                continue
            if key is None:  # a key: its value starts after the colon
                colon = _COLON.match(data, match.end())
                if colon is not None:
                    key = token[1:-1].decode("utf-8", "replace")
                    value_start = colon.end()
                    if data[value_start : value_start + 1] not in (b'"', b"{", b"["):
                        # a number, true, false or null: no token, ends before , or }
                        end = _SCALAR_END.search(data, value_start)
                        stop = end.start() if end is not None else len(data)
                        values[key] = (value_start, stop)
                        key = None
            else:  # a string value
                values[key] = (value_start, match.end())
                key = None
            continue
        if token in (b"{", b"["):
            depth += 1
            continue
        depth -= 1
        if depth == 1 and key is not None:
            values[key] = (value_start, match.end())
            key = None
        elif depth == 0:
            break
    if key is not None:
        values[key] = (value_start, len(data))
    return values


_COLON = re.compile(rb"\s*:\s*")
_SCALAR_END = re.compile(rb"\s*[,}]")
