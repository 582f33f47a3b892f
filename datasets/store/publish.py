"""Publishing a version atomically: stage, verify, then make it visible in one step.

1. The cases are conformed, sorted and written (with clusters and the report) to a staging
   folder: inside the store for a local store (same filesystem, so a rename can publish it), a
   local temporary folder for an object store.
2. The staged case files are read back and the replay completeness check runs on them; a case
   that fails blocks the publish. The data's content hash is compared with the head's
   (``latest``): the same content is reported as a duplicate instead of published again
   (``force`` publishes anyway).
3. A version id is claimed (only-if-absent), the manifest written, and the version made visible:
   a local store renames the staging folder to ``versions/<id>``, then moves the manifest that
   waited beside it in (the step that makes it visible: a staging folder never holds a
   manifest, so one moved into ``versions/`` by hand is no version); an object store
   uploads the data files, re-reads and checks them, then writes ``manifest.json`` last (only-if-
   absent): until the manifest exists the version does not count anywhere.
4. ``latest`` moves forward (compare-and-swap). If that fails, the version is made invisible
   again (its folder goes to ``_trash/``, or its manifest is removed) and the publish fails:
   a version is visible only when the whole publish succeeded.

Publishing is a compare-and-swap on the set's head: with ``expected_parent`` (the version the
run grew from, None for a new set) the version commits only while ``latest`` still points
there; otherwise nothing becomes visible and ``head.HeadMoved`` says which head moved. A
``_pending/<version>`` record (``head.py``) is written before the version becomes visible and
removed after ``latest`` moved, so a publisher killed in between is repaired by the next writer
(``head.repair_head``: the version adopted when it is a verified successor of the head, else
discarded).

The manifest is sealed (``manifest_sha256``) and, when a signing key is configured
(``GOLDEN_SIGNING_KEY``, see ``signing.py``), signed: ``manifest.sig`` is placed next to it
before the version becomes visible. ``clusters.parquet`` is marked with the cases actually
published (``cluster_marks.py``). Cases holding a subject of the set's erasure log are left
out (``erasure_log.drop_erased``).

A publisher killed before the version became visible leaves no visible version and ``latest``
unchanged; its leftovers (staging folder, claim, manifest-less files) are invisible and removed
by ``golden sets gc``. Killed after it (``visible``), it leaves a pending record for
``repair_head``.

Test hook: when ``GOLDEN_PUBLISH_PAUSE_AFTER`` names a point (``cases``, ``clusters``, ``report``,
``verified``, ``claimed``, ``staged``, ``upload:<file name>``, ``uploaded``, ``visible``), the
publisher prints
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from golden_distill.datasets.publish_config import PublishConfig
from golden_distill.datasets.store.aliases import ANY, LATEST, move_alias, read_alias
from golden_distill.datasets.store.case_files import (
    file_entry,
    prepare_cases,
    stage_cases,
    staged_batches,
    write_clusters,
)
from golden_distill.datasets.store.cluster_file import write_clusters_from
from golden_distill.datasets.store.cluster_marks import mark_published
from golden_distill.datasets.store.decisions import write_decisions
from golden_distill.datasets.store.erasure_log import (
    drop_erased,
    erased_case_ids,
    erased_needle_digests,
    read_log,
)
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.head import HeadMoved, clear_pending, mark_pending
from golden_distill.datasets.store.history import erased_versions, next_sequence
from golden_distill.datasets.store.integrity import seal_manifest
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
from golden_distill.datasets.store.recorded_calls import ReplayCheckResult
from golden_distill.datasets.store.signing import (
    SIGNATURE_NAME,
    SIGNING_KEY_ENV,
    TRUSTED_KEYS_DIR,
    public_key_id,
    sign_manifest,
    signing_key_from_env,
    trusted_keys,
)
from golden_distill.datasets.store.staged_check import check_staged
from golden_distill.datasets.store.verify import ChecksumError, read_verified_bytes
from golden_distill.datasets.store.versions import (
    allocate_version,
    read_manifest,
)

if TYPE_CHECKING:  # polars is a pipeline dependency: the reader install has none
    import polars as pl

PAUSE_ENV = "GOLDEN_PUBLISH_PAUSE_AFTER"
RESUME_ENV = "GOLDEN_PUBLISH_RESUME_FILE"


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
    """Test hook (see module docstring): stop here so a test can kill the publisher, or, with
    ``GOLDEN_PUBLISH_RESUME_FILE``, let it go on once that file exists (a race with erase)."""
    if os.environ.get(PAUSE_ENV) == point:
        print(f"GOLDEN_PUBLISH_PAUSED {point}", file=sys.stderr, flush=True)
        resume = os.environ.get(RESUME_ENV)
        while not (resume and os.path.exists(resume)):
            time.sleep(0.2 if resume else 60)


def check_signer(store: StoreFS, signer: Ed25519PrivateKey | None) -> None:
    """A store with ``trusted_keys/`` reads only versions signed by one of them: refuse, before
    any work, to publish a version its readers would refuse."""
    trusted = trusted_keys(store)
    if not trusted:
        return
    if signer is None:
        raise PublishError(
            f"{store.display(TRUSTED_KEYS_DIR)}: this store requires signed versions; set "
            f"{SIGNING_KEY_ENV} (or publish.signing_key_secret_block)"
        )
    key_id = public_key_id(signer.public_key())
    if key_id not in trusted:
        raise PublishError(
            f"signing key {key_id} is not in {store.display(TRUSTED_KEYS_DIR)}; readers would "
            "refuse the version (add its public key there first)"
        )


def _find_same_content(store: StoreFS, set_name: str, content: str) -> str | None:
    """The head (``latest``) when it holds exactly this content. Only the head: an older
    version with the same content is not what readers get, so reporting it as "the latest
    version stands" would leave ``latest`` where it is (e.g. behind a crashed publish)."""
    head = read_alias(store, SetLayout(set_name), LATEST)
    if head is None:
        return None
    with contextlib.suppress(Exception):
        if read_manifest(store, set_name, head).get("content_sha256") == content:
            return head
    return None


def publish_version(
    store_url: str,
    set_name: str,
    *,
    cases: pa.Table | Sequence[Path | str],
    clusters: pa.Table | Path | None = None,
    report_html: str | bytes | Callable[[str], str] | None = None,
    manifest_fields: dict[str, Any] | ManifestFields | None = None,
    force: bool = False,
    decisions: pa.Table | Path | None = None,
    storage_options: dict[str, Any] | None = None,
    config: PublishConfig | None = None,
    signing_key: Ed25519PrivateKey | None = None,
    prechecked: pl.DataFrame | None = None,
    expected_parent: object = ANY,
) -> PublishResult:
    """Publish ``cases`` (GOLDEN_SCHEMA table or Parquet files) as a new immutable version.

    ``clusters``: the cluster table, in memory or as a local Parquet file (the flow's: written
    one range of clusters at a time, ``cluster_file``).
    ``report_html``: the page, or a function of the version id that renders it once the id is
    claimed (so the report names its version).
    ``decisions``: the decisions table (``decisions.py``), in memory or a local Parquet file.
    ``signing_key`` None: the key configured in ``GOLDEN_SIGNING_KEY``, if any, signs it.
    ``prechecked``: ``replay.steps_digests`` of cases a published version passed the replay check
    with (a grown set's carried cases); a staged case with the same digest is not checked again
    (counted in ``replay_check.cases_prechecked``), every other case is.
    ``expected_parent``: the head this version grew from (a version id, or None for a new set);
    when ``latest`` is elsewhere at commit time, ``HeadMoved`` is raised and nothing shows."""
    cfg = config or PublishConfig()
    store = StoreFS(store_url, storage_options)
    layout = SetLayout(set_name)
    fields = parse_fields(manifest_fields)
    signer = signing_key or signing_key_from_env()
    check_signer(store, signer)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    cases, erasure = _without_erased(store, layout, cases)  # an erased subject never comes back
    if erasure is not None:  # signed: a withdrawn version put back is refused (history.py)
        erasure["withdrawn_versions"] = erased_versions(store, set_name)
    timings["prepare"] = time.perf_counter() - started

    if store.is_local:
        store.makedirs(layout.staging_dir)
        staging = store.local_path(f"{layout.staging_dir}/{uuid.uuid4().hex}")
        staging.mkdir()
    else:
        staging = Path(tempfile.mkdtemp(prefix="golden-publish-"))
    try:
        return _publish_staged(
            store, layout, staging, cases, clusters, report_html, fields, force, cfg, timings,
            signer, erasure, prechecked, expected_parent, decisions,
        )  # fmt: skip
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone after a rename; else cleaned here
        shutil.rmtree(staging.with_name(f"{staging.name}.manifest"), ignore_errors=True)


@dataclass(frozen=True)
class _Excluding:
    """Case files to publish, less the case ids the erasure log names (found batch by batch)."""

    paths: list[Path]
    excluded: frozenset[str]


def _without_erased(
    store: StoreFS, layout: SetLayout, cases: pa.Table | Sequence[Path | str]
) -> tuple[pa.Table | _Excluding, dict[str, Any] | None]:
    """The cases less those holding an erased subject, and the manifest's ``erasure`` record.
    Case files are scanned batch by batch (memory stays small); only ids are kept."""
    if isinstance(cases, pa.Table):
        return drop_erased(store, layout, prepare_cases(cases))
    paths = [Path(p) for p in cases]
    digests = erased_needle_digests(store, layout)  # read once, not per batch
    if not digests:
        return _Excluding(paths, frozenset()), None
    dropped: set[str] = set()
    for batch in staged_batches(paths):
        dropped.update(erased_case_ids(batch, digests))
    record = {"log_entries": len(read_log(store, layout)), "cases_dropped": len(dropped)}
    return _Excluding(paths, frozenset(dropped)), record


def _published_ids(staging: Path, files: list[dict[str, Any]]) -> pa.Array:
    ids = [
        pq.read_table(staging / f["name"], columns=["case_id"]).column("case_id").combine_chunks()
        for f in files
        if f["role"] == "cases"
    ]
    return pa.concat_arrays(ids) if ids else pa.array([], pa.string())


def _publish_staged(
    store: StoreFS,
    layout: SetLayout,
    staging: Path,
    cases: pa.Table | _Excluding,
    clusters: pa.Table | Path | None,
    report_html: str | bytes | Callable[[str], str] | None,
    fields: ManifestFields,
    force: bool,
    cfg: PublishConfig,
    timings: dict[str, float],
    signer: Ed25519PrivateKey | None = None,
    erasure: dict[str, Any] | None = None,
    prechecked: pl.DataFrame | None = None,
    expected_parent: object = ANY,
    decisions: pa.Table | Path | None = None,
) -> PublishResult:
    mark = time.perf_counter()
    files, counts = stage_cases(  # streamed and bucketed: memory does not grow with the set
        cases if isinstance(cases, pa.Table) else cases.paths,
        staging,
        max_rows_per_file=cfg.max_rows_per_file,
        row_group_rows=cfg.row_group_rows,
        compression_level=cfg.compression_level,
        exclude=None if isinstance(cases, pa.Table) else cases.excluded,
    )
    _pause("cases")
    wanted = clusters is not None or decisions is not None
    published = _published_ids(staging, files) if wanted else pa.array([], pa.string())
    if clusters is not None:
        if isinstance(clusters, pa.Table):
            entry = write_clusters(mark_published(clusters, published), staging)
        else:  # a file: written one range of clusters at a time
            entry = write_clusters_from(Path(clusters), published, staging)
        files.append(entry)
        counts["clusters"] = entry["rows"]
        _pause("clusters")
    if decisions is not None:
        files.append(write_decisions(decisions, published, staging))
    if report_html is not None and not callable(report_html):
        _write_report(staging, files, report_html)
    timings["write"] = time.perf_counter() - mark

    # Verify what was staged: read it back and run the replay check on the bytes on disk
    # (batch by batch: a case never spans two batches, memory stays small).
    mark = time.perf_counter()
    volatile = ((fields.config or {}).get("ingest") or {}).get("volatile_keys")
    case_paths = [staging / f["name"] for f in files if f["role"] == "cases"]
    check, staged_rows = check_staged(case_paths, volatile, prechecked)
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
    if expected_parent is not ANY and parent != expected_parent:
        raise HeadMoved(layout.set_name, expected_parent, parent)  # type: ignore[arg-type]
    version = allocate_version(store, layout.set_name)
    sequence = next_sequence(store, layout.set_name, parent)  # its place in the signed history
    _pause("claimed")
    if callable(report_html):  # rendered now that the report can name its version
        _write_report(staging, files, report_html(version))
    manifest = build_manifest(
        set_name=layout.set_name,
        version=version,
        parent_version=parent,
        files=files,
        counts=counts,
        fields=fields,
        replay_check=check.summary(),
        sequence=sequence,
        layout={
            "sorted_by": "case_id",
            "row_group_rows": cfg.row_group_rows,
            "max_rows_per_file": cfg.max_rows_per_file,
            "compression": "zstd",
        },
    )
    if erasure is not None:
        manifest["erasure"] = erasure  # cases left out because the erasure log names them
    manifest_bytes = dump_manifest(seal_manifest(manifest))
    signature = sign_manifest(manifest_bytes, signer) if signer is not None else None

    mark = time.perf_counter()
    mark_pending(store, layout, version, parent)  # the next writer repairs a crash from here
    if store.is_local:
        # The staging folder never holds the manifest, so moved into versions/ it is no version:
        # manifest and signature wait in a folder beside it and follow it, the manifest last
        # (the one step that makes the version visible).
        beside = f"{layout.staging_dir}/{staging.name}.manifest"
        store.write_atomic(f"{beside}/{MANIFEST_NAME}", manifest_bytes)
        if signature is not None:
            store.write_atomic(f"{beside}/{SIGNATURE_NAME}", signature)
        _pause("staged")
        store.rename_dir(f"{layout.staging_dir}/{staging.name}", layout.version_dir(version))
        if signature is not None:
            store.rename_dir(
                f"{beside}/{SIGNATURE_NAME}", layout.version_file(version, SIGNATURE_NAME)
            )
        store.rename_dir(f"{beside}/{MANIFEST_NAME}", layout.manifest(version))
    else:
        try:
            _upload(store, layout, version, staging, files, manifest_bytes, signature)
        except Exception:
            if not store.exists(layout.manifest(version)):  # never visible: remove the pieces
                with contextlib.suppress(Exception):
                    store.remove_tree(layout.version_dir(version))
            raise
    _pause("visible")
    try:
        _old, now = move_alias(store, layout, LATEST, version, only_forward=True, expect=parent)
        if now != version:
            raise HeadMoved(layout.set_name, parent, now)
    except Exception:
        moved = False
        with contextlib.suppress(Exception):  # the move may have landed before the error
            moved = read_alias(store, layout, LATEST) == version
        if not moved:
            withdraw_version(store, layout, version)  # a failed publish is never visible
            with contextlib.suppress(Exception):
                clear_pending(store, layout, version)
            raise
    with contextlib.suppress(Exception):  # a leftover record is settled by the next repair
        clear_pending(store, layout, version)
    timings["make_visible"] = time.perf_counter() - mark
    return PublishResult(
        set_name=layout.set_name,
        version=version,
        url=store.display(layout.version_dir(version)),
        deduplicated_of=None,
        replay_check=check,
        manifest=manifest,
        timings=timings,
    )


def _write_report(staging: Path, files: list[dict[str, Any]], html: str | bytes) -> None:
    data = html.encode() if isinstance(html, str) else html
    (staging / REPORT_NAME).write_bytes(data)
    files.append(file_entry(staging / REPORT_NAME, role="report"))
    _pause("report")


def _upload(
    store: StoreFS,
    layout: SetLayout,
    version: str,
    staging: Path,
    files: list[dict[str, Any]],
    manifest_bytes: bytes,
    signature: bytes | None = None,
) -> None:
    """Object stores: data files first, each re-read and checked, the signature, then the
    manifest last."""
    for entry in files:
        store.put_file(staging / entry["name"], layout.version_file(version, entry["name"]))
        _pause(f"upload:{entry['name']}")
    _pause("uploaded")
    for entry in files:
        try:
            read_verified_bytes(store, layout.version_file(version, entry["name"]), entry)
        except ChecksumError as exc:
            raise PublishError(f"upload did not verify: {exc}") from None
    if signature is not None:
        store.write_atomic(layout.version_file(version, SIGNATURE_NAME), signature)
    if not store.create_exclusive(layout.manifest(version), manifest_bytes):
        raise PublishError(f"{store.display(layout.manifest(version))}: already exists")


def withdraw_version(store: StoreFS, layout: SetLayout, version: str) -> None:
    """Make a version invisible in one step (local: its folder moves to ``_trash/``; object
    store: its manifest goes first), then remove the rest. Used when a publish fails after the
    version appeared, by erasure and by gc."""
    if store.is_local:
        trash = f"{layout.trash_dir}/{version}-{uuid.uuid4().hex[:8]}"
        with contextlib.suppress(FileNotFoundError):
            store.rename_dir(layout.version_dir(version), trash)  # invisible in one step
        store.remove_tree(trash)
    else:
        store.remove(layout.manifest(version))  # invisible from here
        store.remove_tree(layout.version_dir(version))
