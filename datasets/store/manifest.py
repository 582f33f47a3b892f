"""The manifest of a version: what it holds, how it was made, and the checksum of every file.

Written last; a version exists only once its manifest does (and verifies). It is plain JSON so
any reader can check a version without this package. It holds ids, counts, hashes and the config;
never record text, personal data or the pseudonym key (only the key's id).
"""

from __future__ import annotations

import hashlib
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
from pydantic import Field

from golden_distill.datasets.config_model import StrictModel, validate_mapping
from golden_distill.datasets.schema import SCHEMA_VERSION

#: The manifest's own format; bump on incompatible changes.
MANIFEST_FORMAT = "golden-set-manifest/1"

REQUIRED_KEYS = ("format", "schema_version", "set", "version", "created_at", "files", "counts")


class ManifestError(ValueError):
    """A manifest that is missing, unreadable or inconsistent (the message names the file)."""


class ManifestFields(StrictModel):
    """What the pipeline contributes to a manifest (``publish_version(manifest_fields=...)``)."""

    config: dict[str, Any] | None = Field(
        None, description="The effective pipeline config (defaults included), as plain data."
    )
    config_sha256: str | None = Field(
        None, description="Hash of the effective config; computed from `config` when absent."
    )
    code_version: str | None = Field(
        None, description="Code version; the installed package version (+ git commit) if absent."
    )
    key_id: str | None = Field(
        None, description="Id of the pseudonym key used (never the key itself)."
    )
    detector_versions: dict[str, Any] = Field(
        default_factory=dict, description="Presidio version and the recognizers that ran."
    )
    lineage: dict[str, Any] = Field(
        default_factory=dict,
        description="Sources: URIs, time window, records read, quarantined per reason.",
    )
    stats: dict[str, Any] = Field(
        default_factory=dict, description="Funnel, dedup and redaction statistics (counts only)."
    )
    dedup: dict[str, Any] = Field(default_factory=dict, description="Dedup statistics.")
    redaction: dict[str, Any] = Field(
        default_factory=dict, description="Redaction statistics (counts per entity type)."
    )
    notes: str | None = Field(None, description="Free text for people (no personal data).")


def parse_fields(fields: dict[str, Any] | ManifestFields | None) -> ManifestFields:
    if isinstance(fields, ManifestFields):
        return fields
    return validate_mapping(ManifestFields, fields or {}, "manifest_fields")


def json_sha256(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def content_sha256(files: list[dict[str, Any]]) -> str:
    """Identity of a version's *data* (cases and clusters, not the report or the manifest).

    Case files are written deterministically (sorted by case_id, fixed row groups), so the
    same cases give the same bytes and publishing them twice is detected.
    """
    lines = [f"{f['role']}:{f['sha256']}" for f in files if f["role"] in ("cases", "clusters")]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def default_code_version() -> str:
    try:
        version = metadata.version("golden-distill")
    except metadata.PackageNotFoundError:
        version = "unknown"
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{version}+g{commit}" if commit else version


def build_manifest(
    *,
    set_name: str,
    version: str,
    parent_version: str | None,
    files: list[dict[str, Any]],
    counts: dict[str, Any],
    fields: ManifestFields,
    replay_check: dict[str, Any],
    layout: dict[str, Any],
    created_at: datetime | None = None,
    sequence: int | None = None,
) -> dict[str, Any]:
    """The manifest. ``parent_version`` and ``sequence`` (the parent's + 1) are the version's
    place in the set's signed history (``history.py``)."""
    config_sha = fields.config_sha256
    if config_sha is None and fields.config is not None:
        config_sha = json_sha256(fields.config)
    return {
        "format": MANIFEST_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "set": set_name,
        "version": version,
        "parent_version": parent_version,
        "sequence": sequence,
        "created_at": (created_at or datetime.now(UTC)).isoformat(timespec="milliseconds"),
        "counts": counts,
        "files": files,
        "content_sha256": content_sha256(files),
        "config_sha256": config_sha,
        "config": fields.config,
        "code_version": fields.code_version or default_code_version(),
        "key_id": fields.key_id,
        "detector_versions": fields.detector_versions,
        "lineage": fields.lineage,
        "stats": fields.stats,
        "dedup": fields.dedup,
        "redaction": fields.redaction,
        "notes": fields.notes,
        "replay_check": replay_check,
        "layout": layout,
    }


def dump_manifest(manifest: dict[str, Any]) -> bytes:
    return orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def load_manifest(data: bytes, where: str) -> dict[str, Any]:
    """Parse and sanity-check a manifest; ``where`` names the file in errors."""
    try:
        manifest = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ManifestError(f"{where}: not valid JSON") from None
    if not isinstance(manifest, dict):
        raise ManifestError(f"{where}: expected a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in manifest]
    if missing:
        raise ManifestError(f"{where}: missing keys {', '.join(missing)}")
    if manifest["format"] != MANIFEST_FORMAT:
        raise ManifestError(f"{where}: unknown manifest format {manifest['format']!r}")
    return manifest


def volatile_keys_of(manifest: dict[str, Any]) -> list[str] | None:
    """The volatile keys ingest hashed arguments with (from the recorded config), if known."""
    config = manifest.get("config") or {}
    keys = (config.get("ingest") or {}).get("volatile_keys")
    return list(keys) if keys is not None else None
