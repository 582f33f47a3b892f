"""The run's work folder, on a local disk or behind any fsspec URL (``s3://bucket/golden-work``).

Why an abstraction: with ``--dask-address`` the shard tasks run on other machines, which do not
share the flow's disk. When ``run.work_dir`` is a URL, every task reads and writes its
intermediate files (candidates, decisions, signatures, quarantine, redacted parts, Prefect's
cached results) through it, so a worker needs only the store, the sources and this URL.

Locations are plain strings (what crosses process boundaries in jobs and results): an absolute
local path, or a full URL. Tasks write a shard's files into a local folder first
(``staged``: the work folder itself when it is local, a private temporary folder otherwise) and
the files are uploaded when the task's step succeeds; reads go through fsspec (polars and
pyarrow on an fsspec file).

The filesystem comes from the store's own opener (``datasets.store.fs.StoreFS``): credentials
and endpoint from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_ENDPOINT_URL``, instance roles), plus the store's ``publish.storage_options`` when the
work folder uses the same protocol as the store (an S3-compatible endpoint set once).

A local work folder keeps its raw-data permissions (files 0600 in 0700 folders, see
``workdir.make_private``); object storage has no such modes: the bucket must be private and
encrypted (docs/operating.md), and the local staging folders of a remote work folder are
private temporary folders removed after each task.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from fsspec.utils import get_protocol

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.flows.run_config import is_url
from golden_distill.flows.workdir import make_private

#: Where a remote work folder keeps what belongs to the flow's machine only (the sources'
#: fingerprint memo, withheld error details, publish parts): ``$GOLDEN_WORK_STATE`` or
#: ``$XDG_CACHE_HOME/golden-distill`` (``~/.cache/golden-distill``), one folder per work URL.
STATE_ENV = "GOLDEN_WORK_STATE"


class Staged:
    """A task's output folder being written: ``path`` is local; ``location`` maps a file in it
    to where it will be in the work folder once the step succeeds."""

    def __init__(self, path: Path, target: str) -> None:
        self.path = path
        self.target = target.rstrip("/")

    def location(self, file: Path) -> str:
        relative = Path(file).relative_to(self.path).as_posix()
        return f"{self.target}/{relative}"


class WorkFolder:
    """A work folder (local folder or fsspec URL) and the few operations the tasks need."""

    def __init__(self, root: str | Path, storage_options: dict[str, Any] | None = None) -> None:
        self._store = StoreFS(str(root), storage_options)
        self.fs = self._store.fs
        self.is_local = self._store.is_local
        self.storage_options = self._store.storage_options
        self.root = self._store.root if self.is_local else self._store.display("")

    def __repr__(self) -> str:
        return f"WorkFolder({self.root!r})"

    # -- locations ----------------------------------------------------------------------------
    def join(self, *parts: str) -> str:
        """The location of ``parts`` under the root ('/'-separated, local or URL)."""
        return "/".join([self.root.rstrip("/"), *(p.strip("/") for p in parts if p)])

    @staticmethod
    def next_to(location: str, name: str) -> str:
        """``name`` in the folder that holds ``location``."""
        return f"{WorkFolder.parent(location)}/{name}"

    @staticmethod
    def parent(location: str) -> str:
        return location.rstrip("/").rsplit("/", 1)[0]

    @staticmethod
    def name(location: str) -> str:
        return location.rstrip("/").rsplit("/", 1)[-1]

    def _remote(self, location: str) -> str:
        self.fs.invalidate_cache(location)
        return location

    def check(self) -> None:
        """A remote work folder's bucket (its top folder) lists with this machine's credentials;
        raises (FileNotFoundError, PermissionError...) otherwise. Nothing to check locally."""
        if self.is_local:
            return
        top = self.fs._strip_protocol(self.root).split("/")[0] or "/"
        self.fs.invalidate_cache(top)
        self.fs.ls(top, detail=False)

    # -- reading ------------------------------------------------------------------------------
    def exists(self, location: str) -> bool:
        if self.is_local:
            return os.path.exists(location)
        return bool(self.fs.exists(self._remote(location)))

    def list_names(self, location: str) -> list[str]:
        """Names of a folder's children ([] when absent)."""
        if self.is_local:
            try:
                return sorted(os.listdir(location))
            except (FileNotFoundError, NotADirectoryError):
                return []
        try:
            entries = self.fs.ls(self._remote(location), detail=False)
        except FileNotFoundError:
            return []
        base = self.fs._strip_protocol(location).rstrip("/")
        return sorted({self.name(e) for e in entries if e.rstrip("/") != base})

    def read_bytes(self, location: str) -> bytes:
        if self.is_local:
            return Path(location).read_bytes()
        return bytes(self.fs.cat_file(self._remote(location)))

    def read_frame(self, location: str, columns: list[str] | None = None) -> pl.DataFrame:
        """A Parquet file as polars reads it (the same decoding whether local or remote)."""
        if self.is_local:
            return pl.read_parquet(location, columns=columns)
        with self.fs.open(self._remote(location), "rb") as handle:
            return pl.read_parquet(handle, columns=columns)

    def read_cases(self, location: str, case_ids: Sequence[str]) -> pa.Table:
        """The rows of a Parquet file whose ``case_id`` is one of ``case_ids``, in file order.
        Read with pyarrow, not polars: the processes that redact then never run polars, whose
        Parquet reader's code alone was ~70 MB of each one's memory."""
        if self.is_local:
            table = pq.read_table(location)
        else:
            with self.fs.open(self._remote(location), "rb") as handle:
                table = pq.read_table(handle)
        wanted = pa.array(list(case_ids), type=table.schema.field("case_id").type)
        return table.filter(pc.is_in(table.column("case_id"), value_set=wanted))

    def scan_frame(self, location: str) -> pl.LazyFrame:
        """A lazy frame of a Parquet file (local: scanned; remote: read, then lazy)."""
        if self.is_local:
            return pl.scan_parquet(location)
        return self.read_frame(location).lazy()

    @contextmanager
    def local_copies(self, locations: list[str]) -> Iterator[list[str]]:
        """Local paths of ``locations`` for readers that need files (the files themselves when
        local; else copies in a private temporary folder, removed at the end)."""
        if self.is_local:
            yield list(locations)
            return
        scratch = Path(tempfile.mkdtemp(prefix="golden-work-"))
        try:
            copies = []
            for index, location in enumerate(locations):
                copy = scratch / f"{index:05d}-{self.name(location)}"
                self.fs.get_file(self._remote(location), str(copy))
                copies.append(str(copy))
            yield copies
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    # -- writing ------------------------------------------------------------------------------
    def write_bytes(self, location: str, data: bytes) -> None:
        if self.is_local:
            Path(location).parent.mkdir(parents=True, exist_ok=True)
            Path(location).write_bytes(data)
            return
        self.fs.pipe_file(location, data)

    def put_file(self, local: Path, location: str) -> None:
        """Copy the local file ``local`` to ``location`` (a remote work folder's URL)."""
        self.fs.put_file(str(local), location)

    def remove_tree(self, location: str) -> None:
        if self.is_local:
            shutil.rmtree(location, ignore_errors=True)
            return
        with suppress(FileNotFoundError):
            self.fs.rm(self._remote(location), recursive=True)

    def remove_file(self, location: str) -> None:
        if self.is_local:
            Path(location).unlink(missing_ok=True)
            return
        with suppress(FileNotFoundError):
            self.fs.rm_file(self._remote(location))

    @contextmanager
    def staged(self, location: str) -> Iterator[Staged]:
        """A fresh, empty output folder for ``location`` (leftovers of an interrupted attempt
        are removed). Local: the folder itself. Remote: a private temporary folder whose files
        are uploaded to ``location`` when the block succeeds, then removed."""
        if self.is_local:
            path = Path(location)
            if path.exists():
                shutil.rmtree(path)
            path.mkdir(parents=True)
            yield Staged(path, str(path))
            return
        self.remove_tree(location)
        scratch = Path(tempfile.mkdtemp(prefix="golden-work-"))  # 0700
        try:
            yield Staged(scratch, location)
            for file in sorted(p for p in scratch.rglob("*") if p.is_file()):
                self.fs.put_file(str(file), f"{location.rstrip('/')}/{file.relative_to(scratch)}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def make_private(self, folder: Path, files: list[Path], stop_at: Path | None = None) -> None:
        """Raw-data permissions on a local work folder (0600 files, 0700 folders); nothing for
        a remote one (its staging folder is a private temporary folder; the bucket's policy
        and encryption protect the objects)."""
        if self.is_local:
            make_private(folder, files, stop_at=stop_at)

    # -- what the flow's machine keeps --------------------------------------------------------
    def local_state(self) -> Path:
        """A local, private folder for what stays on the flow's machine: the work folder itself
        when it is local; else one folder per work URL under ``$GOLDEN_WORK_STATE`` (default
        ``$XDG_CACHE_HOME/golden-distill``)."""
        if self.is_local:
            return Path(self.root)
        base = os.environ.get(STATE_ENV) or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "golden-distill"
        )
        folder = Path(base) / f"work-{hashlib.sha256(self.root.encode()).hexdigest()[:16]}"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)
        return folder

    def result_storage(self, location: str) -> Any:
        """Prefect's result storage at ``location``: a ``Path`` (Prefect reads a ``str`` as a
        block slug) or, for a URL, a ``RemoteFileSystem`` block (not saved on the server: it
        travels with the task to each worker)."""
        if self.is_local:
            return Path(location)
        from prefect.filesystems import RemoteFileSystem  # only flows that use Prefect

        return RemoteFileSystem(basepath=location, settings=dict(self.storage_options))


def work_storage_options(work_url: str, store_url: str, store_options: dict[str, Any]) -> dict:
    """The store's client options (an endpoint URL...) when the work folder uses the same
    protocol as the store; none otherwise (credentials always come from the environment)."""
    if not is_url(work_url) or not store_options:
        return {}
    return dict(store_options) if get_protocol(work_url) == get_protocol(store_url) else {}


def work_folder(config: Any) -> WorkFolder:
    """The work folder of a pipeline config (``run.work_dir``, with the store's options)."""
    url = config.run.work_location()
    options = work_storage_options(
        url, str(config.publish.store_url), config.publish.storage_options or {}
    )
    return WorkFolder(url, options or None)
