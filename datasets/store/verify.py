"""Checking a published version: every file's size and sha256, then the replay check.

Used by ``golden sets verify`` (non-zero exit on any problem) and by the reader, which checks
each file as it reads it. Messages name the file and the kind of problem, nothing from inside it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.manifest import volatile_keys_of
from golden_distill.datasets.store.replay import ReplayCheckResult, check_table
from golden_distill.datasets.store.versions import read_manifest


class ChecksumError(IOError):
    """A published file is missing or differs from its manifest entry (names the file)."""


def read_verified_bytes(store: StoreFS, rel: str, entry: dict[str, Any]) -> bytes:
    """The file's bytes, after checking size and sha256 against the manifest entry."""
    where = store.display(rel)
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


@dataclass(slots=True)
class VerifyReport:
    set_name: str
    version: str
    files_checked: int = 0
    problems: list[str] = field(default_factory=list)  # one line per problem, naming the file
    replay_check: ReplayCheckResult | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and (self.replay_check is None or self.replay_check.ok)

    def lines(self) -> list[str]:
        out = list(self.problems)
        if self.replay_check is not None and not self.replay_check.ok:
            out.append(f"replay check failed: {self.replay_check.describe()}")
        return out


def verify_version(
    store: StoreFS, set_name: str, version: str, *, replay: bool = True
) -> VerifyReport:
    """Recompute every checksum of a version and (by default) run the replay check."""
    layout = SetLayout(set_name)
    manifest = read_manifest(store, set_name, version)
    report = VerifyReport(set_name, version)
    case_tables = []
    for entry in manifest["files"]:
        rel = layout.version_file(version, entry["name"])
        report.files_checked += 1
        try:
            data = read_verified_bytes(store, rel, entry)
        except ChecksumError as exc:
            report.problems.append(str(exc))
            continue
        if entry["role"] == "cases":
            table = parquet_from_bytes(data)
            if table.num_rows != entry.get("rows", table.num_rows):
                report.problems.append(
                    f"{store.display(rel)}: {table.num_rows} rows, manifest says {entry['rows']}"
                )
            case_tables.append(table)
    total = sum(t.num_rows for t in case_tables)
    if not report.problems and total != manifest["counts"].get("cases", total):
        report.problems.append(
            f"{store.display(layout.manifest(version))}: counts.cases differs from the files"
        )
    if replay and case_tables and not report.problems:
        report.replay_check = check_table(pa.concat_tables(case_tables), volatile_keys_of(manifest))
    return report
