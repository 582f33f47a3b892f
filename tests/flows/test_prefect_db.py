"""A fresh PREFECT_HOME starts from a migrated copy of Prefect's database (flows/prefect_db.py):
the first temporary API leaves the copy, the next fresh home starts from it, and a copy that
holds anything a run did is refused."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from golden_distill.flows import prefect_db

#: Starts the temporary API in a fresh process, runs one flow on it, prints what happened.
START_AND_RUN = """
import json, os, time
from golden_distill.flows import prefect_db
from golden_distill.flows.prefect_env import apply_prefect_defaults
apply_prefect_defaults()
had_template = prefect_db.template_file().exists()
started = time.perf_counter()
server = prefect_db.start_temporary_api()
seconds = time.perf_counter() - started
os.environ["PREFECT_API_URL"] = server.api_url
from prefect import flow
@flow
def one() -> int:
    return 1
value = one()
server.stop()
print(json.dumps({"had_template": had_template, "seconds": seconds, "value": value}))
"""


def _start_and_run(home: Path, cache: Path) -> dict:
    env = {**os.environ, "PREFECT_HOME": str(home), "XDG_CACHE_HOME": str(cache)}
    env.pop("PREFECT_API_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", START_AND_RUN], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _flow_runs(database: Path) -> int:
    with sqlite3.connect(database) as db:
        return db.execute("SELECT count(*) FROM flow_run").fetchone()[0]


def test_the_first_api_leaves_a_clean_template_and_the_next_fresh_home_starts_from_it(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    first = _start_and_run(tmp_path / "home-1", cache)
    templates = list((cache / "golden-distill").glob("prefect-*.db"))
    assert not first["had_template"] and first["value"] == 1
    assert len(templates) == 1
    # taken before the flow ran: the first home's database has the run, the template none
    assert _flow_runs(tmp_path / "home-1" / "prefect.db") == 1
    assert prefect_db.is_clean(templates[0])

    second = _start_and_run(tmp_path / "home-2", cache)
    seeded = tmp_path / "home-2" / "prefect.db"
    assert second["had_template"] and second["value"] == 1  # the seeded database works
    assert _flow_runs(seeded) == 1 and prefect_db.is_clean(templates[0])
    assert seeded.stat().st_mode & 0o777 == 0o600
    # a plain journal: reading the template never leaves -wal/-shm files beside it
    with sqlite3.connect(f"file:{templates[0]}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert sorted(p.name for p in templates[0].parent.iterdir()) == [templates[0].name]


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    # Prefect resolves its settings once per process: the URL it would give for this home
    url = f"{prefect_db.SQLITE_PREFIX}{home / 'prefect.db'}"
    monkeypatch.setattr(prefect_db, "database_url", lambda: url)
    return home, cache


def _migrated_like(path: Path, runs: int = 0) -> None:
    """A stand-in database with the tables the template check reads (a unit-test double)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE alembic_version (version_num TEXT)")
        for table in prefect_db.RUN_TABLES:
            db.execute(f"CREATE TABLE {table} (id TEXT)")
        for n in range(runs):
            db.execute("INSERT INTO flow_run VALUES (?)", (str(n),))


def test_a_database_with_a_run_is_never_kept_as_the_template(homes: tuple[Path, Path]) -> None:
    home, _ = homes
    _migrated_like(home / "prefect.db", runs=1)
    assert prefect_db.database_file() == home / "prefect.db"
    assert not prefect_db.save_template()
    assert not prefect_db.template_file().exists()
    assert list(prefect_db.template_file().parent.iterdir()) == []  # no partial copy left


def test_seeding_never_replaces_an_existing_database(homes: tuple[Path, Path]) -> None:
    home, _ = homes
    _migrated_like(prefect_db.template_file())
    (home / "prefect.db").write_bytes(b"someone else's")
    assert not prefect_db.seed_home()
    assert (home / "prefect.db").read_bytes() == b"someone else's"
    assert [p.name for p in home.iterdir()] == ["prefect.db"]


def test_a_database_elsewhere_than_a_local_file_is_left_to_prefect(
    homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, _ = homes
    _migrated_like(prefect_db.template_file())
    url = "postgresql+asyncpg://u:p@localhost/prefect"
    monkeypatch.setattr(prefect_db, "database_url", lambda: url)
    assert prefect_db.database_file() is None
    assert not prefect_db.seed_home() and not prefect_db.save_template()
    assert list(home.iterdir()) == []


@pytest.mark.parametrize("damage", ["not a database", "a run in it", "not prefect's"])
def test_a_damaged_or_foreign_template_is_never_used(homes: tuple[Path, Path], damage: str) -> None:
    home, _ = homes
    template = prefect_db.template_file()
    if damage == "not a database":
        template.parent.mkdir(parents=True)
        template.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)  # a truncated header
    elif damage == "a run in it":
        _migrated_like(template, runs=1)
    else:
        template.parent.mkdir(parents=True)
        with sqlite3.connect(template) as db:
            db.execute("CREATE TABLE notes (text TEXT)")
    assert not prefect_db.seed_home()
    assert list(home.iterdir()) == []  # Prefect creates and migrates its database itself
    assert [p.name for p in template.parent.iterdir()] == [template.name]  # no copy left
