"""A fresh ``PREFECT_HOME`` starts from a migrated copy of Prefect's database.

Prefect's temporary API creates its SQLite database on first use and runs every migration on it:
about 6 s of the ~9 s the API takes to start on a 2-core machine (3 s with a migrated
database). A nightly machine keeps its home, but CI, containers, tests and each benchmark run
start with an empty one. So the first temporary API that migrates a database leaves a copy of
it (``save_template``) in the user's cache, keyed by Prefect's version (its migrations are part
of the package), and the next fresh home starts from that copy (``seed_home``).

The copy holds Prefect's schema and block types only: it is taken right after the API started,
before any flow run was created, and refused if any run table holds a row. Everything here is
best effort: when a step fails, Prefect migrates as it always did.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # heavy: Prefect's server, imported when an API is started
    from prefect.server.api.server import SubprocessASGIServer

#: Prefect tables that hold what runs did; a template must have none of their rows.
RUN_TABLES = ("flow_run", "task_run", "log", "artifact", "deployment")
SQLITE_PREFIX = "sqlite+aiosqlite:///"


def start_temporary_api() -> SubprocessASGIServer:
    """Start Prefect's temporary API (a no-op when this process already did): seeded from the
    template when its database is new, and leaving the template when it migrated one."""
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the same singleton Prefect's client starts on demand
    if not server.running:
        seeded = seed_home()
        server.start()
        if not seeded:
            save_template()
    return server


def database_url() -> str:
    """Prefect's database URL as its settings resolve it (the default: a file in its home)."""
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL

    return PREFECT_API_DATABASE_CONNECTION_URL.value() or ""


def database_file() -> Path | None:
    """Prefect's database when it is a local SQLite file (its default), else None."""
    url = database_url()
    if not url.startswith(SQLITE_PREFIX) or ":memory:" in url:
        return None
    return Path(url[len(SQLITE_PREFIX) :].split("?", 1)[0])


def template_file() -> Path:
    """The migrated copy for this Prefect version, in the user's cache folder."""
    import prefect

    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "golden-distill" / f"prefect-{prefect.__version__}.db"


def seed_home() -> bool:
    """Before the temporary API starts: give a database that does not exist yet the migrated
    template, if there is one (and it is one: a damaged or foreign file is never used). True
    when it was seeded."""
    with contextlib.suppress(Exception):
        target = database_file()
        # a link, not a rename: 0600 (mkstemp), and it fails rather than replace a database
        return target is not None and _place_clean_copy(template_file(), target, os.link)
    return False


def save_template() -> bool:
    """After the temporary API started on a database it migrated: keep a copy for fresh homes
    (when none exists for this Prefect version). True when one was saved."""
    with contextlib.suppress(Exception):
        source = database_file()
        return source is not None and _place_clean_copy(source, template_file(), _keep)
    return False


def _keep(copy: Path, template: Path) -> None:
    _rollback_journal(copy)
    os.replace(copy, template)  # whole or not at all


def _place_clean_copy(source: Path, target: Path, place: Callable[[Path, Path], None]) -> bool:
    """``place(copy, target)`` with a clean copy of ``source`` (``_clean_copy``), when
    ``source`` is a file and ``target`` does not exist yet. True when it was placed."""
    if target.exists() or not source.is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with _clean_copy(source, target.parent) as copy:
        if copy is None:
            return False
        place(copy, target)
        return True


def is_clean(database: Path) -> bool:
    """A migrated schema and no row of any run table (nothing a run did)."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "alembic_version" not in tables or not set(RUN_TABLES) <= tables:
            return False
        return all(
            db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0 for table in RUN_TABLES
        )


def _backup(source: Path, target: Path) -> None:
    """A consistent copy of a database another process may have open (write-ahead log too)."""
    with (
        contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def _rollback_journal(database: Path) -> None:
    """The copy keeps the write-ahead-log mode of the database it was taken from, so every
    read of it would leave ``-wal``/``-shm`` files beside it in the cache: a plain journal
    instead (Prefect sets its own mode on the database a home starts from)."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA journal_mode=DELETE")


@contextmanager
def _clean_copy(source: Path, folder: Path) -> Iterator[Path | None]:
    """A consistent copy of ``source`` in ``folder`` (to be linked or moved into place), or
    None when the copy is not a clean migrated database (``is_clean``); whatever is left of it
    is removed on exit."""
    fd, name = tempfile.mkstemp(dir=folder, prefix=".prefect-", suffix=".db")
    os.close(fd)
    copy = Path(name)
    try:
        _backup(source, copy)
        yield copy if is_clean(copy) else None
    finally:
        copy.unlink(missing_ok=True)
