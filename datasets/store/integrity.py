"""Opening a version only when every byte is accounted for: the manifest's own consistency, its
signature, and the names of the files it lists. Used by the reader, ``verify``, ``promote`` and
``diff``, so all refuse the same damage with the same message (``<set>@<version>: <problem>``).

What is checked here, before any case file is read:

* the signature (``manifest.sig``) when there is a key to check it against: the caller's
  ``public_keys``, else the store's ``trusted_keys/``. With a key, unsigned is refused;
* every file name is a plain name inside the version folder (no separator, ``..``, absolute
  path; locally no symlink leading out of the folder); roles are known; names are unique;
* there is a cases entry; ``content_sha256`` re-derived from the entries matches; the config
  matches ``config_sha256``; ``counts.cases`` equals the cases entries' ``rows``;
* the version folder holds nothing the manifest does not list (besides the manifest and its
  signature): a file slipped in next to the listed ones would be read by a glob
  (``cases-*.parquet``) although no signature covers it;
* ``sequence``, when present, is a positive integer and ``parent_version`` an older version id
  (the set's history, ``history.py``);
* the seal (``manifest_sha256``, a hash of the manifest without it) matches when present: it
  catches a hand edit of any field of an unsigned manifest (key id, lineage...). A seal can be
  recomputed by whoever edits the manifest; only a signature defends against that.

File bytes (size, sha256, row counts) are checked as files are read (``verify.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import (
    MANIFEST_NAME,
    LayoutError,
    SetLayout,
    check_file_name,
    is_version,
    parse_version,
)
from golden_distill.datasets.store.manifest import (
    ManifestError,
    content_sha256,
    json_sha256,
    load_manifest,
)
from golden_distill.datasets.store.signing import (
    SIGNATURE_NAME,
    SignatureError,
    read_signature,
    trusted_keys,
    verify_signature,
)
from golden_distill.datasets.store.versions import VersionNotFound

SEAL_KEY = "manifest_sha256"
ROLES = ("cases", "clusters", "report", "decisions")
_SHA256_CHARS = frozenset("0123456789abcdef")


class TamperError(ManifestError):
    """A version whose manifest, signature or file list does not add up (names version and
    problem)."""


@dataclass(slots=True)
class CheckedVersion:
    set_name: str
    version: str
    manifest: dict[str, Any]
    signed_by: str | None  # the verified signer's key id (None: not checked or unsigned)
    signature_key_id: str | None  # the key id the signature file claims (verified or not)


def seal_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """Add the seal: the hash of every other field (call last, before writing)."""
    manifest.pop(SEAL_KEY, None)
    manifest[SEAL_KEY] = json_sha256(manifest)
    return manifest


def _fail(label: str, problem: str) -> TamperError:
    return TamperError(f"{label}: {problem}")


def check_manifest_body(manifest: dict[str, Any], label: str) -> None:
    """The manifest agrees with itself (see the module docstring); raises TamperError."""
    files = manifest.get("files")
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        raise _fail(label, "manifest 'files' is not a list of entries")
    seen: set[str] = set()
    for entry in files:
        try:
            name = check_file_name(entry.get("name"), label)
        except LayoutError as exc:
            raise TamperError(str(exc)) from None
        if name in (MANIFEST_NAME, SIGNATURE_NAME) or name in seen:
            raise _fail(label, f"file {name!r} listed twice or shadows the manifest")
        seen.add(name)
        if entry.get("role") not in ROLES:
            raise _fail(label, f"file {name}: unknown role {entry.get('role')!r}")
        sha = entry.get("sha256")
        if not isinstance(sha, str) or len(sha) != 64 or not set(sha) <= _SHA256_CHARS:
            raise _fail(label, f"file {name}: sha256 is not a hex digest")
        if not isinstance(entry.get("size"), int) or entry["size"] < 0:
            raise _fail(label, f"file {name}: size is not a byte count")
        if entry["role"] == "cases" and (not isinstance(entry.get("rows"), int)):
            raise _fail(label, f"file {name}: cases entry without a row count")
    cases = [f for f in files if f["role"] == "cases"]
    if not cases:
        raise _fail(label, "manifest lists no cases file (cases entry removed)")
    if content_sha256(files) != manifest.get("content_sha256"):
        raise _fail(label, "content_sha256 does not match the files listed (file list edited)")
    config = manifest.get("config")
    if config is not None and manifest.get("config_sha256") != json_sha256(config):
        raise _fail(label, "config does not match config_sha256 (config edited)")
    counts = manifest.get("counts")
    rows = sum(f["rows"] for f in cases)
    if not isinstance(counts, dict) or counts.get("cases") != rows:
        claimed = counts.get("cases") if isinstance(counts, dict) else None
        raise _fail(label, f"counts.cases is {claimed!r} but the cases files hold {rows} rows")
    sequence = manifest.get("sequence")
    if sequence is not None and (not isinstance(sequence, int) or sequence < 1):
        raise _fail(label, f"sequence {sequence!r} is not a positive integer")
    parent = manifest.get("parent_version")
    if parent is not None and not (
        is_version(parent) and parse_version(parent) < parse_version(str(manifest.get("version")))
    ):
        raise _fail(label, f"parent_version {parent!r} is not an older version id")
    if SEAL_KEY in manifest:
        body = {k: v for k, v in manifest.items() if k != SEAL_KEY}
        if json_sha256(body) != manifest[SEAL_KEY]:
            raise _fail(label, "manifest edited: its fields do not match manifest_sha256")


def _check_listed_only(
    store: StoreFS, layout: SetLayout, version: str, manifest: dict[str, Any], label: str
) -> None:
    """Every file in the version folder is listed in the manifest (or is the manifest or its
    signature); anything else was put there after publishing."""
    allowed = {f["name"] for f in manifest["files"]} | {MANIFEST_NAME, SIGNATURE_NAME}
    extra = [n for n in store.list_names(layout.version_dir(version)) if n not in allowed]
    if extra:
        shown = ", ".join(sorted(extra)[:5])
        raise _fail(label, f"file(s) not listed in the manifest: {shown} (added after publishing)")


def _check_no_escape(store: StoreFS, layout: SetLayout, version: str, label: str) -> None:
    """Locally, a listed file must not be a symlink leading out of the version folder."""
    if not store.is_local:
        return
    folder = os.path.realpath(store.abs(layout.version_dir(version)))
    versions = os.path.realpath(store.abs(layout.versions_dir))
    if os.path.dirname(folder) != versions:
        raise _fail(label, "the version folder is a symlink leading out of the set")
    for name in store.list_names(layout.version_dir(version)):
        path = store.abs(layout.version_dir(version)) + "/" + name
        if os.path.islink(path):
            target = os.path.realpath(path)
            if os.path.commonpath([folder, target]) != folder:
                raise _fail(label, f"file {name} is a symlink leading out of the version folder")


def load_version(
    store: StoreFS,
    set_name: str,
    version: str,
    *,
    public_keys: dict[str, Ed25519PublicKey] | None = None,
) -> CheckedVersion:
    """The version's manifest, after every check that needs no case file (see the docstring).

    ``public_keys`` None means: the store's ``trusted_keys/`` (none there: signatures are not
    required, but a present one is still reported by key id)."""
    layout = SetLayout(set_name)
    label = f"{set_name}@{version}"
    rel = layout.manifest(version)
    try:
        data = store.read_bytes(rel)
    except FileNotFoundError:
        raise VersionNotFound(f"{label}: no such published version") from None
    manifest = load_manifest(data, label)
    if manifest.get("version") != version or manifest.get("set") != set_name:
        raise _fail(label, "manifest names another set or version")
    keys = public_keys if public_keys is not None else trusted_keys(store)
    sig_rel = layout.version_file(version, SIGNATURE_NAME)
    try:
        signature = store.read_bytes(sig_rel)
    except FileNotFoundError:
        signature = None
    signed_by = claimed = None
    if signature is not None:
        claimed = read_signature(signature, label)["key_id"]
    if keys:
        if signature is None:
            raise SignatureError(f"{label}: unsigned, but a signature by a trusted key is required")
        signed_by = verify_signature(data, signature, keys, label)
    check_manifest_body(manifest, label)
    _check_listed_only(store, layout, version, manifest, label)
    _check_no_escape(store, layout, version, label)
    return CheckedVersion(set_name, version, manifest, signed_by, claimed)


def describe_signature(
    store: StoreFS,
    set_name: str,
    version: str,
    public_keys: dict[str, Ed25519PublicKey] | None = None,
) -> str:
    """One line for `golden sets show`: unsigned, signed by which key id, verified or why not."""
    layout = SetLayout(set_name)
    try:
        signature = store.read_bytes(layout.version_file(version, SIGNATURE_NAME))
    except FileNotFoundError:
        return "unsigned"
    label = f"{set_name}@{version}"
    try:
        claimed = read_signature(signature, label)["key_id"]
    except SignatureError as exc:
        return f"signature unreadable: {exc}"
    keys = public_keys if public_keys is not None else trusted_keys(store)
    if not keys:
        return f"signed by key {claimed} (not verified: no trusted key given)"
    try:
        verify_signature(store.read_bytes(layout.manifest(version)), signature, keys, label)
    except SignatureError as exc:
        return f"signed by key {claimed}: INVALID ({exc})"
    return f"signed by key {claimed} (verified)"
