"""Publishing a version atomically: stage, verify, then make it visible in one step.

1. The cases are conformed, sorted and written (with clusters and the report) to a staging
   folder: inside the store for a local store (same filesystem, so a rename can publish it), a
   local temporary folder for an object store.
2. The staged case files are read back and the replay completeness check runs on them; a case
   that fails blocks the publish. The data's content hash is compared with every published
   version: the same content is reported as a duplicate instead of published again (``force``
   publishes anyway).
3. A version id is claimed (only-if-absent), the manifest written, and the version made visible:
   a local store renames the staging folder to ``versions/<id>`` (one step); an object store
   uploads the data files, re-reads and checks them, then writes ``manifest.json`` last (only-if-
   absent): until the manifest exists the version does not count anywhere.
4. ``latest`` moves forward (compare-and-swap).

A publisher killed at any point leaves no visible version and ``latest`` unchanged; its leftovers
(staging folder, claim, manifest-less files) are invisible and removed by ``golden sets gc``.

Test hook: when ``GOLDEN_PUBLISH_PAUSE_AFTER`` names a point (``cases``, ``clusters``, ``report``,
``verified``, ``claimed``, ``staged``, ``upload:<file name>``, ``uploaded``), the publisher prints
``GOLDEN_PUBLISH_PAUSED <point>`` to stderr and sleeps there, so a test can kill it at that point.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from golden_distill.datasets.publish_config import PublishConfig
from golden_distill.datasets.store.aliases import LATEST, move_alias, read_alias
from golden_distill.datasets.store.case_files import (
    file_entry,
    stage_cases,
    staged_batches,
    write_clusters,
)
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import (
    MANIFEST_NAME,
    REPORT_NAME,
    SetLayout,
)
from golden_distill.datasets.store.manifest import (
    ManifestFields,
    build_manifest,
    content_sha256,
    dump_manifest,
    parse_fields,
)
from golden_distill.datasets.store.replay import ReplayCheckResult, check_table
from golden_distill.datasets.store.verify import ChecksumError, read_verified_bytes
from golden_distill.datasets.store.versions import (
    allocate_version,
    list_versions,
    read_manifest,
)

PAUSE_ENV = "GOLDEN_PUBLISH_PAUSE_AFTER"


class PublishError(RuntimeError):
    """Publishing failed; nothing became visible."""


class ReplayCheckFailed(PublishError):
    """The replay completeness check found cases a replay could not look up; publish blocked."""

    def __init__(self, result: ReplayCheckResult) -> None:
        self.result = result
        super().__init__(
            f"replay check failed for {len(result.failed_case_ids)} case(s): {result.describe()}"
        )


@dataclass(slots=True)
class PublishResult:
    set_name: str
    version: str  # the new version, or the existing one when deduplicated
    url: str  # the version's folder
    deduplicated_of: str | None  # set when the same content was already published
    replay_check: ReplayCheckResult
    manifest: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def published(self) -> bool:
        return self.deduplicated_of is None


def _pause(point: str) -> None:
    """Test hook (see module docstring): stop here so a test can kill the publisher."""
    if os.environ.get(PAUSE_ENV) == point:
        print(f"GOLDEN_PUBLISH_PAUSED {point}", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)


def _find_same_content(store: StoreFS, set_name: str, content: str) -> str | None:
    for version in reversed(list_versions(store, set_name)):
        with contextlib.suppress(Exception):
            if read_manifest(store, set_name, version).get("content_sha256") == content:
                return version
    return None


def publish_version(
    store_url: str,
    set_name: str,
    *,
    cases: pa.Table | Sequence[Path | str],
    clusters: pa.Table | None = None,
    report_html: str | bytes | None = None,
    manifest_fields: dict[str, Any] | ManifestFields | None = None,
    force: bool = False,
    storage_options: dict[str, Any] | None = None,
    config: PublishConfig | None = None,
) -> PublishResult:
    """Publish ``cases`` (GOLDEN_SCHEMA table or Parquet files) as a new immutable version."""
    cfg = config or PublishConfig()
    store = StoreFS(store_url, storage_options)
    layout = SetLayout(set_name)
    fields = parse_fields(manifest_fields)
    timings: dict[str, float] = {}

    if store.is_local:
        store.makedirs(layout.staging_dir)
        staging = store.local_path(f"{layout.staging_dir}/{uuid.uuid4().hex}")
        staging.mkdir()
    else:
        staging = Path(tempfile.mkdtemp(prefix="golden-publish-"))
    try:
        return _publish_staged(
            store, layout, staging, cases, clusters, report_html, fields, force, cfg, timings
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone after a rename; else cleaned here


def _publish_staged(
    store: StoreFS,
    layout: SetLayout,
    staging: Path,
    cases: pa.Table | Sequence[Path | str],
    clusters: pa.Table | None,
    report_html: str | bytes | None,
    fields: ManifestFields,
    force: bool,
    cfg: PublishConfig,
    timings: dict[str, float],
) -> PublishResult:
    mark = time.perf_counter()
    files, counts = stage_cases(  # streamed and bucketed: memory does not grow with the set
        cases,
        staging,
        max_rows_per_file=cfg.max_rows_per_file,
        row_group_rows=cfg.row_group_rows,
        compression_level=cfg.compression_level,
    )
    _pause("cases")
    if clusters is not None:
        files.append(write_clusters(clusters, staging))
        _pause("clusters")
    if report_html is not None:
        data = report_html.encode() if isinstance(report_html, str) else report_html
        (staging / REPORT_NAME).write_bytes(data)
        files.append(file_entry(staging / REPORT_NAME, role="report"))
        _pause("report")
    timings["write"] = time.perf_counter() - mark

    # Verify what was staged: read it back and run the replay check on the bytes on disk
    # (batch by batch: a case never spans two batches, memory stays small).
    mark = time.perf_counter()
    volatile = ((fields.config or {}).get("ingest") or {}).get("volatile_keys")
    check = ReplayCheckResult()
    staged_rows = 0
    case_paths = [staging / f["name"] for f in files if f["role"] == "cases"]
    for batch in staged_batches(case_paths):
        staged_rows += batch.num_rows
        part = check_table(batch, volatile)
        check.cases_checked += part.cases_checked
        check.steps_checked += part.steps_checked
        check.failures.extend(part.failures)
    if staged_rows != counts["cases"]:
        raise PublishError(f"staged cases: {staged_rows} rows, expected {counts['cases']}")
    timings["replay_check"] = time.perf_counter() - mark
    if not check.ok:
        raise ReplayCheckFailed(check)
    _pause("verified")

    content = content_sha256(files)
    if not force:
        existing = _find_same_content(store, layout.set_name, content)
        if existing is not None:
            return PublishResult(
                set_name=layout.set_name,
                version=existing,
                url=store.display(layout.version_dir(existing)),
                deduplicated_of=existing,
                replay_check=check,
                manifest=read_manifest(store, layout.set_name, existing),
                timings=timings,
            )

    parent = read_alias(store, layout, LATEST)
    version = allocate_version(store, layout.set_name)
    _pause("claimed")
    if clusters is not None:
        counts["clusters"] = clusters.num_rows
    manifest = build_manifest(
        set_name=layout.set_name,
        version=version,
        parent_version=parent,
        files=files,
        counts=counts,
        fields=fields,
        replay_check=check.summary(),
        layout={
            "sorted_by": "case_id",
            "row_group_rows": cfg.row_group_rows,
            "max_rows_per_file": cfg.max_rows_per_file,
            "compression": "zstd",
        },
    )
    manifest_bytes = dump_manifest(manifest)

    mark = time.perf_counter()
    if store.is_local:
        (staging / MANIFEST_NAME).write_bytes(manifest_bytes)
        _pause("staged")
        store.rename_dir(
            f"{layout.staging_dir}/{staging.name}", layout.version_dir(version)
        )  # the one step that makes the version visible
    else:
        try:
            _upload(store, layout, version, staging, files, manifest_bytes)
        except Exception:
            if not store.exists(layout.manifest(version)):  # never visible: remove the pieces
                with contextlib.suppress(Exception):
                    store.remove_tree(layout.version_dir(version))
            raise
    timings["make_visible"] = time.perf_counter() - mark

    move_alias(store, layout, LATEST, version, only_forward=True)
    return PublishResult(
        set_name=layout.set_name,
        version=version,
        url=store.display(layout.version_dir(version)),
        deduplicated_of=None,
        replay_check=check,
        manifest=manifest,
        timings=timings,
    )


def _upload(
    store: StoreFS,
    layout: SetLayout,
    version: str,
    staging: Path,
    files: list[dict[str, Any]],
    manifest_bytes: bytes,
) -> None:
    """Object stores: data files first, each re-read and checked, the manifest last."""
    for entry in files:
        store.put_file(staging / entry["name"], layout.version_file(version, entry["name"]))
        _pause(f"upload:{entry['name']}")
    _pause("uploaded")
    for entry in files:
        try:
            read_verified_bytes(store, layout.version_file(version, entry["name"]), entry)
        except ChecksumError as exc:
            raise PublishError(f"upload did not verify: {exc}") from None
    if not store.create_exclusive(layout.manifest(version), manifest_bytes):
        raise PublishError(f"{store.display(layout.manifest(version))}: already exists")
