"""Turning the run's `sources` into shards (one input file each) with content fingerprints.

A shard is the unit of parallel work and of caching: one recording file. Its fingerprint is the
sha256 of its bytes, so a rerun over unchanged files recognises every shard, and a file rewritten
in place (same name, new content) is redone. A database URL is one shard that is never cached
(its content cannot be fingerprinted cheaply).
"""

from __future__ import annotations

import glob
import hashlib
from dataclasses import dataclass
from pathlib import Path

import orjson

#: File names a folder source contributes (anything else, e.g. `_truth.json`, is ignored).
RECORDING_SUFFIXES = (
    ".jsonl",
    ".jsonl.gz",
    ".jsonl.zst",
    ".ndjson",
    ".json",
    ".json.gz",
    ".parquet",
    ".csv",
)
URL_PREFIXES = ("sqlite:", "postgresql:", "postgres:", "postgresql+psycopg:")


@dataclass(frozen=True)
class Shard:
    """One unit of per-shard work: a source URI and the fingerprint of its content."""

    uri: str
    fingerprint: str | None  # None: not cacheable (a database)
    size: int = 0

    @property
    def label(self) -> str:
        """Short display name (the file name; a URL without its credentials)."""
        if self.fingerprint is None:
            return display_uri(self.uri).split("?")[0]
        return Path(self.uri).name


def display_uri(uri: str) -> str:
    """A source URI safe to log or record in a manifest: a URL loses its user and password."""
    if "://" in uri and "@" in uri.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = uri.split("://", 1)
        return f"{scheme}://{rest.split('@', 1)[1]}"
    return uri


class SourceNotFound(FileNotFoundError):
    """A source that names nothing: no file, no folder with recordings, no glob match."""


def _is_recording(path: Path) -> bool:
    name = path.name
    return not name.startswith(("_", ".")) and name.endswith(RECORDING_SUFFIXES)


def expand_sources(sources: list[str]) -> list[str]:
    """Every input a list of sources names, in a stable order, each once."""
    found: list[str] = []
    for source in sources:
        if source.startswith(URL_PREFIXES):
            found.append(source)
            continue
        path = Path(source).expanduser()
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and _is_recording(p))
            if not files:
                raise SourceNotFound(f"{source}: folder holds no recording files")
            found.extend(str(p.resolve()) for p in files)
        elif path.is_file():
            found.append(str(path.resolve()))
        elif any(ch in source for ch in "*?["):
            matches = sorted(Path(m) for m in glob.glob(str(path), recursive=True))
            files = [p for p in matches if p.is_file()]
            if not files:
                raise SourceNotFound(f"{source}: pattern matches no file")
            found.extend(str(p.resolve()) for p in files)
        else:
            raise SourceNotFound(f"{source}: no such file or folder")
    return list(dict.fromkeys(found))


def file_fingerprint(path: Path, chunk: int = 4 << 20) -> str:
    """sha256 of a file's bytes (streamed; hashlib releases the GIL on large chunks)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def discover_shards(sources: list[str], memo: Path | None = None) -> list[Shard]:
    """Expand sources and fingerprint every file.

    ``memo`` (a JSON file in the work folder) remembers each file's sha256 with its size,
    mtime (ns) and inode, so an unchanged file is not read again just to be recognised; any
    change to those re-hashes it.
    """
    known: dict[str, list] = {}
    if memo is not None and memo.exists():
        try:
            known = orjson.loads(memo.read_bytes())
        except orjson.JSONDecodeError:
            known = {}
    shards, seen = [], {}
    for uri in expand_sources(sources):
        if uri.startswith(URL_PREFIXES):
            shards.append(Shard(uri=uri, fingerprint=None))
            continue
        st = Path(uri).stat()
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        entry = known.get(uri)
        sha = entry[3] if entry and entry[:3] == stamp else file_fingerprint(Path(uri))
        seen[uri] = [*stamp, sha]
        shards.append(Shard(uri=uri, fingerprint=sha, size=st.st_size))
    if memo is not None and any(known.get(k) != v for k, v in seen.items()):
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_suffix(".tmp")
        tmp.write_bytes(orjson.dumps({**known, **seen}))
        tmp.replace(memo)
    return shards
