"""Checking a published version: the manifest (``integrity.load_version``: signature, names,
content hash, counts), every file's size, sha256 and row count, then the replay check.

Used by ``golden sets verify`` (non-zero exit on any problem), ``promote`` and the reader, which
checks each file as it reads it. Messages name the version, the file and the kind of problem,
nothing from inside it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from golden_distill.datasets.store.case_files import count_cases
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.integrity import load_version
from golden_distill.datasets.store.layout import LayoutError, SetLayout
from golden_distill.datasets.store.manifest import ManifestError, volatile_keys_of
from golden_distill.datasets.store.recorded_calls import ReplayCheckResult, check_table


class ChecksumError(IOError):
    """A published file is missing or differs from its manifest entry (names the file)."""


def read_verified_bytes(store: StoreFS, rel: str, entry: dict[str, Any]) -> bytes:
    """The file's bytes, after checking size and sha256 against the manifest entry."""
    where = describe_file(store, rel)
    try:
        data = store.read_bytes(rel)
    except FileNotFoundError:
        raise ChecksumError(f"{where}: missing") from None
    if len(data) != entry["size"]:
        raise ChecksumError(f"{where}: size {len(data)} differs from manifest {entry['size']}")
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise ChecksumError(f"{where}: sha256 differs from manifest (file corrupted)")
    return data


def parquet_from_bytes(data: bytes) -> pa.Table:
    return pq.read_table(pa.BufferReader(data))


def describe_file(store: StoreFS, rel: str) -> str:
    """``<set>@<version> file <name> (<url>)`` for messages: the version first, then where."""
    parts = rel.split("/")
    if len(parts) == 4 and parts[1] == "versions":
        return f"{parts[0]}@{parts[2]} file {parts[3]} ({store.display(rel)})"
    return store.display(rel)


def check_rows(rows: int, entry: dict[str, Any], where: str) -> None:
    """A cases (or decisions) file holds exactly the rows its manifest entry says (the counts
    come from it)."""
    if entry.get("role") in ("cases", "decisions") and rows != entry.get("rows"):
        raise ChecksumError(f"{where}: {rows} rows, manifest says {entry.get('rows')}")


@dataclass(slots=True)
class VerifyReport:
    set_name: str
    version: str
    files_checked: int = 0
    problems: list[str] = field(default_factory=list)  # one line per problem, naming the file
    replay_check: ReplayCheckResult | None = None
    signed_by: str | None = None  # the verified signer's key id (None: unsigned or not required)

    @property
    def ok(self) -> bool:
        return not self.problems and (self.replay_check is None or self.replay_check.ok)

    def lines(self) -> list[str]:
        out = list(self.problems)
        if self.replay_check is not None and not self.replay_check.ok:
            out.append(f"replay check failed: {self.replay_check.describe()}")
        return out


def verify_version(
    store: StoreFS,
    set_name: str,
    version: str,
    *,
    replay: bool = True,
    public_keys: dict[str, Ed25519PublicKey] | None = None,
) -> VerifyReport:
    """Check the manifest and its signature, recompute every checksum and row count of a
    version and (by default) run the replay check. ``public_keys`` None: the store's
    ``trusted_keys/``."""
    layout = SetLayout(set_name)
    report = VerifyReport(set_name, version)
    try:
        checked = load_version(store, set_name, version, public_keys=public_keys)
    except (ManifestError, LayoutError) as exc:
        report.problems.append(str(exc))
        return report
    manifest, report.signed_by = checked.manifest, checked.signed_by
    case_tables = []
    cluster_rows = None
    for entry in manifest["files"]:
        rel = layout.version_file(version, entry["name"])
        report.files_checked += 1
        try:
            data = read_verified_bytes(store, rel, entry)
        except ChecksumError as exc:
            report.problems.append(str(exc))
            continue
        if entry["role"] in ("cases", "clusters", "decisions"):
            try:
                table = parquet_from_bytes(data)
            except (pa.ArrowException, OSError):
                report.problems.append(f"{describe_file(store, rel)}: not a readable Parquet file")
                continue
            if entry["role"] == "clusters":
                cluster_rows = table.num_rows
                continue
            if entry["role"] == "decisions":
                try:
                    check_rows(table.num_rows, entry, describe_file(store, rel))
                except ChecksumError as exc:
                    report.problems.append(str(exc))
                continue
            try:
                check_rows(table.num_rows, entry, describe_file(store, rel))
            except ChecksumError as exc:
                report.problems.append(str(exc))
            case_tables.append(table)
    if not report.problems:
        report.problems.extend(_count_problems(manifest, case_tables, cluster_rows, set_name))
    if replay and case_tables and not report.problems:
        report.replay_check = check_table(pa.concat_tables(case_tables), volatile_keys_of(manifest))
    return report


def _count_problems(
    manifest: dict[str, Any], tables: list[pa.Table], cluster_rows: int | None, set_name: str
) -> list[str]:
    """``counts`` re-derived from the files: cases, steps, tenants, per funnel, clusters."""
    label = f"{set_name}@{manifest['version']}"
    counts = manifest["counts"]
    found = count_cases(pa.concat_tables(tables)) if tables else {"cases": 0}
    if cluster_rows is not None:
        found["clusters"] = cluster_rows
    return [
        f"{label}: counts.{key} is {counts.get(key)!r} but the files hold {value!r}"
        for key, value in found.items()
        if key in counts and counts[key] != value
    ]
