"""Listing a set's versions, resolving ``name@alias``, and allocating the next version id.

A version counts only when its manifest exists (the manifest is written last, or arrives with
the folder's rename). Ids are ``YYYY.MM.DD.N`` from the UTC date; the next id is allocated by
creating ``_claims/<id>`` only-if-absent, so two concurrent publishers can never get the same id
(the loser moves on to N+1). Ids never go backwards: a clock behind the newest id reuses that
id's day. A claim whose publisher died leaves a gap in N, never a half-visible version.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, date, datetime
from typing import Any

import orjson

from golden_distill.datasets.store.aliases import read_alias
from golden_distill.datasets.store.fs import StoreError, StoreFS
from golden_distill.datasets.store.layout import (
    SetLayout,
    SetRef,
    format_version,
    is_version,
    parse_version,
)
from golden_distill.datasets.store.manifest import ManifestError, load_manifest


class VersionNotFound(LookupError):
    """No published version (or alias) by that name."""


def list_sets(store: StoreFS) -> list[str]:
    return [n for n in store.list_names("") if store.list_names(f"{n}/versions")]


def _version_names(store: StoreFS, layout: SetLayout) -> list[str]:
    return [n for n in store.list_names(layout.versions_dir) if is_version(n)]


def list_versions(store: StoreFS, set_name: str) -> list[str]:
    """Published versions (manifest present), oldest first."""
    layout = SetLayout(set_name)
    found = [v for v in _version_names(store, layout) if store.exists(layout.manifest(v))]
    return sorted(found, key=parse_version)


def read_manifest(store: StoreFS, set_name: str, version: str) -> dict[str, Any]:
    layout = SetLayout(set_name)
    rel = layout.manifest(version)
    try:
        data = store.read_bytes(rel)
    except FileNotFoundError:
        raise VersionNotFound(f"{set_name}@{version}: no such published version") from None
    manifest = load_manifest(data, store.display(rel))
    if manifest.get("version") != version or manifest.get("set") != set_name:
        raise ManifestError(f"{store.display(rel)}: names another set or version")
    return manifest


def resolve(store: StoreFS, ref: SetRef) -> str:
    """The version id a ``name@version`` or ``name@alias`` reference points to."""

    layout = SetLayout(ref.set_name)
    version = ref.selector if ref.is_version else read_alias(store, layout, ref.selector)
    if version is None:
        raise VersionNotFound(f"{ref}: no such alias")
    if not store.exists(layout.manifest(version)):
        raise VersionNotFound(f"{ref}: version {version} is not published")
    return version


def allocate_version(store: StoreFS, set_name: str, *, now: datetime | None = None) -> str:
    """Claim the next free ``YYYY.MM.DD.N``; safe against concurrent publishers."""
    layout = SetLayout(set_name)
    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    known = set(_version_names(store, layout))
    known |= {n for n in store.list_names(layout.claims_dir) if is_version(n)}
    keys = [parse_version(v) for v in known]
    newest_day = max((date(y, m, d) for y, m, d, _ in keys), default=today)
    day = max(today, newest_day)
    n = 1 + max((k[3] for k in keys if date(k[0], k[1], k[2]) == day), default=0)
    owner = orjson.dumps(
        {
            "token": uuid.uuid4().hex,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "claimed_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
    )
    for _ in range(1000):
        version = format_version(day, n)
        if not store.exists(layout.manifest(version)) and (
            store.create_exclusive(layout.claim(version), owner)
        ):
            return version
        n += 1
    raise StoreError(f"could not allocate a version of {set_name} (1000 ids taken)")
