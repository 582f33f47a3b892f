"""The ``pg_url`` fixture: a private schema on the test PostgreSQL server (started by
tests/services/postgres.sh). Conftests re-export it: ``from pg_schema import pg_url``."""

from __future__ import annotations

import os
import uuid

import pytest


@pytest.fixture
def pg_url():
    """A private schema on the test PostgreSQL server (started by tests/services/postgres.sh)."""
    base = os.environ.get("GOLDEN_TEST_POSTGRES_URL")
    if not base:
        if os.environ.get("CI"):
            pytest.fail(
                "GOLDEN_TEST_POSTGRES_URL is not set: tests/services/postgres.sh did not run"
            )
        pytest.skip("no PostgreSQL here: run `make test` or source tests/services/postgres.sh")
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    yield f"{base}{sep}options=-csearch_path%3D{schema}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
