"""What the sources given to `golden ingest` name: files, folders, globs, fsspec URLs, databases.

A source string may name one file, a folder of recording files, a glob (``logs/2026-11-*.jsonl.gz``)
or the same behind an fsspec URL (``s3://bucket/nightly/*.jsonl.zst``). Databases
(``sqlite:///x.db``, ``postgresql://...``) and evidence folders are whole sources that adapters
recognise by name; they are not expanded. Folders contribute their recording files only, so the
generator's ``_truth.json`` or a hidden file next to the recordings is never read as input.
"""

from __future__ import annotations

import re
from typing import IO

import fsspec
from fsspec.core import url_to_fs

from golden_distill.datasets.sources.base import SourceError

#: Names a folder contributes (anything else, e.g. `_truth.json`, is ignored).
RECORDING_SUFFIXES = (
    ".jsonl",
    ".jsonl.gz",
    ".jsonl.zst",
    ".ndjson",
    ".ndjson.gz",
    ".ndjson.zst",
    ".json",
    ".json.gz",
    ".json.zst",
    ".parquet",
    ".csv",
)
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_CREDENTIALS = re.compile(r"://[^/@]*@")
#: Query parameters that carry secrets in database and object-store URLs.
_SECRET_QUERY = re.compile(
    r"([?&](?:password|passwd|pwd|secret|token|access_key|secret_key|sslpassword)=)[^&#]*",
    re.IGNORECASE,
)


def display_uri(uri: str) -> str:
    """``uri`` safe for messages, logs, reports and manifests: any ``user:password@`` and any
    secret-bearing query parameter (``?password=...``) masked. The one rule for every source."""
    return _SECRET_QUERY.sub(r"\1***", _CREDENTIALS.sub("://***@", uri))


def is_local_path(uri: str) -> bool:
    """True for a plain path (no ``scheme://``)."""
    return _SCHEME.match(uri) is None


def is_file_url(uri: str) -> bool:
    """True for local paths and URLs fsspec can open as files (s3://, gs://, memory://...)."""
    match = _SCHEME.match(uri)
    if match is None:
        return True
    scheme = match.group(1).lower()
    return scheme in fsspec.available_protocols()


def _is_recording(name: str) -> bool:
    base = name.rstrip("/").rsplit("/", 1)[-1]
    return not base.startswith(("_", ".")) and base.lower().endswith(RECORDING_SUFFIXES)


def expand_source(source: str) -> list[str]:
    """The files ``source`` names, sorted; raises ``SourceError`` when it names nothing."""
    try:
        fs, path = url_to_fs(source)
    except (ValueError, ImportError) as exc:
        raise SourceError(f"{display_uri(source)}: cannot open ({type(exc).__name__})") from None
    local = _SCHEME.match(source) is None

    def unstrip(found: str) -> str:
        return found if local else fs.unstrip_protocol(found)

    try:
        if any(ch in path for ch in "*?["):
            found = sorted(p for p in fs.glob(path) if fs.isfile(p))
            if not found:
                raise SourceError(f"{display_uri(source)}: pattern matches no file")
            return [unstrip(p) for p in found]
        if fs.isdir(path):
            found = sorted(p for p in fs.find(path) if _is_recording(p))
            if not found:
                raise SourceError(f"{display_uri(source)}: folder holds no recording files")
            return [unstrip(p) for p in found]
        if fs.isfile(path):
            return [source]
    except OSError as exc:
        raise SourceError(f"{display_uri(source)}: cannot list ({type(exc).__name__})") from None
    raise SourceError(f"{display_uri(source)}: no such file or folder")


def open_binary(uri: str) -> IO[bytes]:
    """A binary file object for a path or fsspec URL (no decompression)."""
    try:
        return fsspec.open(uri, "rb").open()
    except FileNotFoundError:
        raise SourceError(f"{display_uri(uri)}: no such file") from None
    except (OSError, ValueError) as exc:
        raise SourceError(f"{display_uri(uri)}: cannot open ({type(exc).__name__})") from None
