"""The few filesystem primitives the store's atomicity rests on, over a local disk or fsspec.

Why each exists:

* ``create_exclusive``: allocating a version id must be safe against a concurrent publisher.
  Locally that is ``os.open(O_CREAT | O_EXCL)``; on S3 it is a PUT with ``If-None-Match: *``
  (S3 conditional writes, which the real S3 and moto honour), so exactly one writer wins.
* ``write_atomic``: a reader sees the old bytes or the new bytes, never half. Locally a temporary
  file in the same folder then ``os.replace``; on object stores a single PUT already is atomic.
* ``update``: read-modify-write for aliases (compare-and-swap). Locally under a short lock file
  (``O_EXCL``, broken when stale); on S3 a conditional PUT (``If-Match: <etag>``, or
  ``If-None-Match: *`` when the object is new), retried when another writer got there first.
* ``rename_dir``: local only; how a staged version becomes visible in one step.

Every path given to these methods is relative to the store root, '/'-separated.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

#: A local alias lock older than this is considered left by a dead process and broken.
STALE_LOCK_SECONDS = 30.0


class StoreError(RuntimeError):
    """The store cannot do what was asked (unsupported backend, lost race after retries...)."""


class StoreFS:
    """One store (local folder or fsspec URL) and the operations publishing needs."""

    def __init__(self, url: str, storage_options: dict[str, Any] | None = None) -> None:
        self.url = str(url)
        fs, root = fsspec.core.url_to_fs(self.url, **(storage_options or {}))
        self.fs: fsspec.AbstractFileSystem = fs
        self.is_local = isinstance(fs, LocalFileSystem)
        self.root = str(Path(root).resolve()) if self.is_local else root.rstrip("/")
        self.storage_options = dict(storage_options or {})

    @property
    def supports_conditional_update(self) -> bool:
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        return self.is_local or any(p in ("s3", "s3a") for p in protocols)

    # -- paths -------------------------------------------------------------------------------
    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def display(self, rel: str) -> str:
        """A URL for messages and results (no credentials ever appear in it)."""
        if self.is_local:
            return self.abs(rel)
        return self.fs.unstrip_protocol(self.abs(rel))

    def local_path(self, rel: str) -> Path:
        if not self.is_local:
            raise StoreError("local path asked of a remote store")
        return Path(self.abs(rel))

    # -- reading -----------------------------------------------------------------------------
    def _fresh(self, rel: str) -> str:
        path = self.abs(rel)
        if not self.is_local:
            self.fs.invalidate_cache(path)
        return path

    def exists(self, rel: str) -> bool:
        return self.fs.exists(self._fresh(rel))

    def read_bytes(self, rel: str) -> bytes:
        """The whole object; ``FileNotFoundError`` when it is absent."""
        if self.is_local:
            return Path(self.abs(rel)).read_bytes()
        return self.fs.cat_file(self._fresh(rel))

    def open_read(self, rel: str) -> IO[bytes]:
        return self.fs.open(self._fresh(rel), "rb")

    def size(self, rel: str) -> int:
        return int(self.fs.size(self._fresh(rel)))

    def modified(self, rel: str) -> datetime | None:
        """Last modification time (UTC), or None when absent or unknown."""
        try:
            if self.is_local:
                return datetime.fromtimestamp(os.stat(self.abs(rel)).st_mtime, tz=UTC)
            info = self.fs.info(self._fresh(rel))
        except FileNotFoundError:
            return None
        stamp = info.get("LastModified") or info.get("mtime") or info.get("updated")
        if isinstance(stamp, datetime):
            return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
        if isinstance(stamp, int | float):
            return datetime.fromtimestamp(stamp, tz=UTC)
        return None

    def list_names(self, rel: str) -> list[str]:
        """Names of the children of a folder (files and sub-folders); [] when it is absent."""
        if self.is_local:
            try:
                return sorted(os.listdir(self.abs(rel)))
            except FileNotFoundError:
                return []
        try:
            entries = self.fs.ls(self._fresh(rel), detail=False)
        except FileNotFoundError:
            return []
        base = self.abs(rel).rstrip("/")
        names = {e.rstrip("/").rsplit("/", 1)[-1] for e in entries if e.rstrip("/") != base}
        return sorted(names)

    # -- writing -----------------------------------------------------------------------------
    def makedirs(self, rel: str) -> None:
        if self.is_local:
            os.makedirs(self.abs(rel), exist_ok=True)

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Replace ``rel`` with ``data`` so that readers see old or new bytes, never a mix."""
        if not self.is_local:
            self.fs.pipe_file(self.abs(rel), data)
            return
        path = Path(self.abs(rel))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)

    def create_exclusive(self, rel: str, data: bytes) -> bool:
        """Create ``rel`` holding ``data`` only if it does not exist; True when this call won."""
        if self.is_local:
            path = Path(self.abs(rel))
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            return True
        try:
            self.fs.pipe_file(self.abs(rel), data, mode="create")
        except FileExistsError:
            return False
        except TypeError as exc:  # a backend without conditional create
            raise StoreError(
                f"store {self.url!r} cannot create objects only-if-absent; "
                "version allocation needs it (S3 and local folders support it)"
            ) from exc
        return True

    def put_file(self, local: Path, rel: str) -> None:
        """Copy a local file into the store (remote stores only; local stores rename)."""
        self.fs.put_file(str(local), self.abs(rel))

    def remove(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._fresh(rel))

    def remove_tree(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._fresh(rel), recursive=True)

    def rename_dir(self, src: str, dst: str) -> None:
        """Local only: make a fully written folder visible under its final name in one step."""
        target = Path(self.abs(dst))
        if target.exists():
            raise FileExistsError(errno.EEXIST, "target already exists", str(target))
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.abs(src), target)
        _fsync_dir(target.parent)

    def update(
        self, rel: str, change: Callable[[bytes | None], bytes | None], *, attempts: int = 50
    ) -> tuple[bytes | None, bytes | None]:
        """Compare-and-swap ``rel``: ``change(old)`` returns the new bytes or None to leave it.

        Returns ``(old, new)``. ``change`` may be called several times when writers race.
        """
        if self.is_local:
            with self._local_lock(rel):
                try:
                    old: bytes | None = self.read_bytes(rel)
                except FileNotFoundError:
                    old = None
                new = change(old)
                if new is not None and new != old:
                    self.write_atomic(rel, new)
                return old, (old if new is None else new)
        if not self.supports_conditional_update:
            raise StoreError(
                f"store {self.url!r}: moving aliases needs conditional writes, implemented for "
                "local folders and S3 (If-Match); this backend is not supported yet"
            )
        path = self.abs(rel)
        for _ in range(attempts):
            self.fs.invalidate_cache(path)
            try:
                etag = self.fs.info(path).get("ETag")
                old = self.fs.cat_file(path)
            except FileNotFoundError:
                etag, old = None, None
            new = change(old)
            if new is None or new == old:
                return old, old
            try:
                if etag is None:
                    self.fs.pipe_file(path, new, mode="create")
                else:
                    self.fs.pipe_file(path, new, IfMatch=etag)
            except (FileExistsError, OSError):
                # another writer changed it since we read it: read again and retry
                time.sleep(random.uniform(0.01, 0.1))
                continue
            return old, new
        raise StoreError(f"could not update {self.display(rel)}: too many concurrent writers")

    @contextlib.contextmanager
    def _local_lock(self, rel: str) -> Iterator[None]:
        lock = Path(self.abs(rel) + ".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + 2 * STALE_LOCK_SECONDS
        while True:
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                os.close(fd)
                break
            except FileExistsError:
                with contextlib.suppress(FileNotFoundError):
                    if time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
                        lock.unlink()  # left by a process that died holding it
                        continue
                if time.monotonic() > deadline:
                    raise StoreError(f"lock {lock} is held too long") from None
                time.sleep(random.uniform(0.005, 0.03))
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()


def _fsync_dir(path: Path) -> None:
    """Make a rename durable (POSIX: the directory entry must be synced too)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
