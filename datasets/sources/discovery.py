"""Which inputs a run's sources name, and the fingerprint of each: one place for ingest and flow.

A source may be a file, a folder (its recording files), a glob, any of these behind an fsspec URL
(``s3://``, ``memory://``...), a date template (``recordings/dt={date}/``, expanded over the
run's window, see partitions.py), a database URL or an evidence folder (whole sources that an
adapter reads as one unit). ``golden ingest`` and the nightly flow both expand sources here, so
they read the same files and show the same (credential-free) names.

A *shard* is one input: the unit of parallel work and of caching. Its fingerprint is the sha256
of its bytes (memoised by size, mtime and inode for local files, by size and ETag / modification
time for object stores), so a rerun over unchanged inputs recognises every shard without reading
it and a file rewritten in place is redone. A database has no fingerprint (never cached).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from fsspec.core import url_to_fs

from golden_distill.datasets.sources.base import SourceError
from golden_distill.datasets.sources.identity import source_name
from golden_distill.datasets.sources.lines import compression_of, read_head
from golden_distill.datasets.sources.partitions import expand_template, is_templated
from golden_distill.datasets.sources.registry import ADAPTERS
from golden_distill.datasets.sources.uris import (
    display_uri,
    expand_source,
    is_file_url,
    is_local_path,
    open_binary,
)


@dataclass(frozen=True)
class Shard:
    """One unit of per-shard work: a source URI and the fingerprint of its content."""

    uri: str
    fingerprint: str | None  # None: not cacheable (a database)
    size: int = 0
    label: str = ""  # short display name, never with credentials
    #: the file's name inside its source (``identity.source_name``): what position-based case
    #: ids are derived from, so it is part of the shard's cache key
    name: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", shard_label(self.uri))


def shard_label(uri: str) -> str:
    """The file name (with its partition folder when it has one, e.g. ``dt=2026-11-28/x.jsonl``);
    a database URL without credentials or query."""
    if not is_file_url(uri):
        return display_uri(uri).split("?")[0]
    parts = uri.rstrip("/").split("/")
    if len(parts) >= 2 and "=" in parts[-2]:
        return "/".join(parts[-2:])
    return parts[-1]


def whole_source_format(source: str, fmt: str | None) -> str | None:
    """The format that takes ``source`` as one unit (a database URL, an evidence folder)."""
    candidates = [fmt] if fmt else list(ADAPTERS)
    for name in candidates:
        try:
            if ADAPTERS[name].sniff(source, b""):
                return name
        except (OSError, ValueError):
            continue
    return None


def detect_format(uri: str, head: bytes) -> str | None:
    """The registered format whose adapter recognises ``uri`` / ``head`` (first match wins)."""
    for name, adapter in ADAPTERS.items():
        try:
            if adapter.sniff(uri, head):
                return name
        except (OSError, ValueError):
            continue
    return None


def sniff_head(uri: str) -> bytes:
    """The first decompressed bytes of a file source (empty for databases and folders)."""
    if not is_file_url(uri):
        return b""
    with open_binary(uri) as raw:
        return read_head(raw, compression_of(uri))


def format_hint(uri: str, used: str | None) -> str:
    """What to tell the user when ``uri`` read as format ``used`` gave no case: the format its
    first bytes look like (``did you mean --format chat?``), or that none recognises it."""
    try:
        found = whole_source_format(uri, None)
        if found is None:
            head = sniff_head(uri)
            if not head.strip():
                return ""  # empty: nothing to recognise
            found = detect_format(uri, head)
    except (SourceError, OSError, ValueError):
        return ""
    if found is not None and found != used:
        return f"did you mean --format {found}?"
    if found is None:
        known = ", ".join(ADAPTERS)
        return f"it does not look like any format this reader knows ({known})"
    return ""


@dataclass
class Discovery:
    """The shards the sources name, and the date partitions of the window that do not exist."""

    shards: list[Shard] = field(default_factory=list)
    missing_partitions: list[str] = field(default_factory=list)
    skipped_by_mtime: int = 0


def expand_partitions(
    sources: Iterable[str], since: datetime | None, until: datetime | None
) -> list[str]:
    """Every source with its date templates expanded over ``[since, until)``."""
    return [p for s in sources for p in expand_template(s, since, until)]


def discover(
    sources: list[str],
    *,
    fmt: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    by_mtime: bool = False,
    memo: Path | None = None,
    before_hashing: Callable[[], None] | None = None,
) -> Discovery:
    """Expand ``sources`` over the window and fingerprint every input.

    A date partition of the window that does not exist is skipped (listed in
    ``missing_partitions``: a night without recordings); a templated source none of whose
    partitions exist, and any other source that names nothing, is an error. ``by_mtime`` keeps
    only files modified inside the window (for sources that are neither partitioned nor ordered).
    ``before_hashing`` is called once every source is listed, before new files are read (a
    night's files take seconds to hash: the caller may start slow work of its own meanwhile).
    """
    known = _load_memo(memo)
    found = Discovery()
    seen: dict[str, list[Any]] = {}
    uris: list[tuple[str, bool]] = []  # (uri, whole source)
    names: dict[str, str] = {}  # uri -> its name inside its source (the first source naming it)
    for source in sources:
        partitions = expand_template(source, since, until)
        templated = is_templated(source)
        hits = 0
        for concrete in partitions:
            if whole_source_format(concrete, fmt) is not None:
                uris.append((concrete, True))
                hits += 1
                continue
            try:
                files = expand_source(concrete)
            except SourceError:
                if not templated:
                    raise
                found.missing_partitions.append(display_uri(concrete))
                continue
            for f in files:
                uri = str(Path(f).resolve()) if is_local_path(f) else f
                uris.append((uri, False))
                names.setdefault(uri, source_name(source, f))
            hits += 1
        if templated and not hits:
            raise SourceError(
                f"{display_uri(source)}: no partition exists in the window "
                f"({_iso(since)} .. {_iso(until)})"
            )
    pending: list[tuple[int, str, Any, str, list[Any], int]] = []  # files to hash, by position
    for uri, whole in dict.fromkeys(uris):
        if whole:
            found.shards.append(Shard(uri=uri, fingerprint=_folder_fingerprint(uri)))
            continue
        fs, path = url_to_fs(uri)
        if by_mtime and (since or until) and not _modified_in(fs, path, since, until):
            found.skipped_by_mtime += 1
            continue
        stamp, size = _stamp(fs, path, uri)
        entry = known.get(uri)
        if entry and entry[:-1] == stamp:
            seen[uri] = [*stamp, entry[-1]]
            found.shards.append(Shard(uri=uri, fingerprint=entry[-1], size=size, name=names[uri]))
        else:
            pending.append((len(found.shards), uri, fs, path, stamp, size))
            # the fingerprint is filled in below
            found.shards.append(Shard(uri=uri, fingerprint=None, size=size, name=names[uri]))
    if pending and before_hashing is not None:
        before_hashing()
    hashed = _hash_all([(fs, path) for _, _, fs, path, _, _ in pending])
    for (at, uri, _, _, stamp, size), sha in zip(pending, hashed, strict=True):
        seen[uri] = [*stamp, sha]
        found.shards[at] = Shard(uri=uri, fingerprint=sha, size=size, name=names[uri])
    _save_memo(memo, known, seen)
    return found


#: Files hashed at once: sha256 releases the GIL on large chunks, so a night of new files
#: (a million sessions: ~7 GB) is hashed on every core instead of one (it took 5-9 s on one
#: core, before Prefect's API even began to boot); a few more threads than cores keep
#: object-store reads busy.
HASH_THREADS = min(8, (os.cpu_count() or 1) * 2)


def _hash_all(files: list[tuple[Any, str]]) -> list[str]:
    """``_content_sha256`` of every file, in order (in threads when there are several)."""
    if len(files) <= 1:
        return [_content_sha256(fs, path) for fs, path in files]
    with ThreadPoolExecutor(max_workers=HASH_THREADS, thread_name_prefix="sha256") as pool:
        return list(pool.map(lambda item: _content_sha256(*item), files))


def discover_shards(sources: list[str], memo: Path | None = None, **options: Any) -> list[Shard]:
    """The shards of ``sources`` (see ``discover``)."""
    return discover(sources, memo=memo, **options).shards


def _iso(moment: datetime | None) -> str:
    return moment.isoformat() if moment else "-"


def _stamp(fs: Any, path: str, uri: str) -> tuple[list[Any], int]:
    """What must be unchanged for a memoised fingerprint to be reused."""
    if is_local_path(uri):
        st = Path(path).stat()
        return [st.st_size, st.st_mtime_ns, st.st_ino], st.st_size
    info = fs.info(path)
    size = int(info.get("size") or 0)
    tag = info.get("ETag") or info.get("etag") or info.get("md5Hash") or ""
    try:
        modified = fs.modified(path).isoformat()
    except (NotImplementedError, OSError, AttributeError):
        modified = ""
    return [size, str(tag), modified], size


def _content_sha256(fs: Any, path: str) -> str:
    """sha256 of a file's bytes (streamed; hashlib releases the GIL on large chunks)."""
    with fs.open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _folder_fingerprint(uri: str) -> str | None:
    """A whole source's fingerprint: None for a database (its content cannot be fingerprinted
    cheaply: never cached); for an evidence folder, the digest of its files' names and bytes."""
    if not is_file_url(uri):
        return None
    fs, path = url_to_fs(uri)
    if not fs.isdir(path):
        return None
    digest = hashlib.sha256()
    for name in sorted(fs.find(path)):
        digest.update(name.removeprefix(path).encode())
        digest.update(_content_sha256(fs, name).encode())
    return digest.hexdigest()


def _modified_in(fs: Any, path: str, since: datetime | None, until: datetime | None) -> bool:
    try:
        moment = fs.modified(path)
    except (NotImplementedError, OSError, AttributeError):
        return True  # no modification time: cannot place it, keep it (the record time decides)
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    return (since is None or moment >= since) and (until is None or moment < until)


def _load_memo(memo: Path | None) -> dict[str, list[Any]]:
    if memo is None or not memo.exists():
        return {}
    try:
        loaded = orjson.loads(memo.read_bytes())
    except orjson.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _save_memo(memo: Path | None, known: dict[str, list[Any]], seen: dict[str, list[Any]]) -> None:
    if memo is None or not any(known.get(k) != v for k, v in seen.items()):
        return
    memo.parent.mkdir(parents=True, exist_ok=True)
    tmp = memo.with_name(f".{memo.name}.{os.getpid()}.{time.time_ns()}.tmp")  # one per writer
    tmp.write_bytes(orjson.dumps({**known, **seen}))
    tmp.replace(memo)
