"""Small generated corpora shared by the generator's tests (a few hundred sessions each)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from golden_distill.synthetic import Truth, generate_corpus, load_truth

SESSIONS = 300
OVERSIZED_LIMIT = 32 * 1024


def decoded_lines(path: Path) -> list[bytes]:
    """Every complete line a file decodes to (a cut stream yields its intact prefix)."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = zlib.decompressobj(wbits=31).decompress(data)
    elif path.name.endswith(".zst"):
        data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    lines = data.split(b"\n")
    return lines[:-1]  # the part after the last newline is not a complete line


@pytest.fixture(scope="session")
def read_lines() -> Callable[[Path], list[bytes]]:
    """``decoded_lines`` for tests (pytest's importlib mode forbids importing conftest)."""
    return decoded_lines


@pytest.fixture(scope="session")
def gz_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gz_corpus")
    generate_corpus(
        out, sessions=SESSIONS, seed=11, shards=2, compress="gz", oversized_limit=OVERSIZED_LIMIT
    )
    return out


@pytest.fixture(scope="session")
def gz_truth(gz_corpus: Path) -> Truth:
    return load_truth(gz_corpus)


@pytest.fixture(scope="session")
def gz_records(gz_corpus: Path, gz_truth: Truth) -> dict[str, dict[str, Any]]:
    """record id -> parsed recording, read at the file and line the truth names."""
    lines = {f: decoded_lines(gz_corpus / f) for f in gz_truth.summary["files"]}
    return {rid: orjson.loads(lines[r.file][r.line - 1]) for rid, r in gz_truth.records.items()}


@pytest.fixture(scope="session")
def corpus_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    def make(name: str, **kwargs: Any) -> Path:
        out = tmp_path_factory.mktemp(name)
        kwargs.setdefault("oversized_limit", OVERSIZED_LIMIT)
        generate_corpus(out, **kwargs)
        return out

    return make
