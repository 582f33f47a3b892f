"""Reading evidence tables from a SQL database by URL: SQLite (embedded) or PostgreSQL.

Traces stream in chunks of ``chunk`` traces, never the whole table: SQLite pages by keyset
``(trace_id, rowid)``; PostgreSQL reads ``session_trace`` through a server-side (named) cursor.
Each chunk's calls and snapshots are fetched with one indexed query per table. Rows no trace
can claim (calls/snapshots of a missing trace, NULL keys, a repeated trace id) come out as
``RowProblem``\\s for the quarantine, after the traces.

The database password never appears in messages or case sources: URLs are shown redacted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from golden_distill.datasets.quarantine import NULL_REQUIRED, ORPHAN_CALL
from golden_distill.datasets.sources.base import SourceError
from golden_distill.datasets.sources.evidence_schema import (
    CALLS,
    ORPHAN_SNAPSHOT,
    SESSION,
    SNAPSHOT,
    RowProblem,
    TracePairer,
    TraceRows,
    column_names,
    required_columns,
)

SQL_SCHEMES = {"sqlite": "sqlite", "postgresql": "postgresql", "postgres": "postgresql"}


def sql_dialect(uri: str) -> str | None:
    """``sqlite`` / ``postgresql`` for a database URL, else None."""
    scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
    return SQL_SCHEMES.get(scheme.split("+", 1)[0])


def redact_url(uri: str) -> str:
    """The URL with any password replaced by ``***`` (for messages and case sources)."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def sqlite_path(uri: str) -> Path:
    """``sqlite:///rel/path.db`` -> ``rel/path.db``; ``sqlite:////abs/path.db`` -> ``/abs/...``."""
    rest = uri.split("://", 1)[1]
    if not rest.startswith("/"):
        raise SourceError(f"{uri}: expected sqlite:///relative/path or sqlite:////absolute/path")
    return Path(unquote(rest[1:].split("?", 1)[0]))


def connect(uri: str) -> Any:
    """A DB-API connection for a SQLite or PostgreSQL URL (SourceError when impossible)."""
    dialect = sql_dialect(uri)
    if dialect == "sqlite":
        path = sqlite_path(uri)
        if not path.exists():
            raise SourceError(f"{uri}: no such SQLite database file")
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if dialect == "postgresql":
        # optional: psycopg is needed only for PostgreSQL evidence tables
        import psycopg

        try:
            return psycopg.connect(uri.replace("postgres://", "postgresql://", 1))
        except psycopg.Error as exc:
            raise SourceError(
                f"{redact_url(uri)}: cannot connect to PostgreSQL ({type(exc).__name__})"
            ) from None
    raise SourceError(f"{uri}: not a sqlite:// or postgresql:// URL")


class SqlEvidenceReader:
    def __init__(self, uri: str, chunk: int) -> None:
        self.uri = uri
        self.shown = redact_url(uri)
        self.chunk = chunk
        self.dialect = sql_dialect(uri)
        self.mark = "?" if self.dialect == "sqlite" else "%s"

    def __iter__(self) -> Iterator[TraceRows | RowProblem]:
        conn = connect(self.uri)
        try:
            cols = {t: self._columns(conn, t) for t in (SESSION, SNAPSHOT, CALLS)}
            for table in (SESSION, CALLS):
                if cols[table] is None:
                    raise SourceError(f"{self.shown}: table {table} not found")
                missing = set(required_columns(table)) - set(cols[table] or [])
                if missing:
                    raise SourceError(
                        f"{self.shown}: {table} lacks column(s) {', '.join(sorted(missing))}"
                    )
            yield from self._null_keys(conn, SESSION, cols[SESSION])
            yield from self._traces(conn, cols)
            yield from self._orphans(conn, CALLS, cols[CALLS], ORPHAN_CALL)
            if cols[SNAPSHOT] is not None:
                yield from self._orphans(conn, SNAPSHOT, cols[SNAPSHOT], ORPHAN_SNAPSHOT)
        finally:
            conn.close()

    def _columns(self, conn: Any, table: str) -> list[str] | None:
        """The known columns ``table`` has, or None when the table does not exist."""
        cur = conn.cursor()
        try:
            cur.execute(f"SELECT * FROM {table} LIMIT 0")
        except Exception:
            conn.rollback()
            return None
        present = {d[0].lower() for d in cur.description}
        cur.close()
        return [c for c in column_names(table) if c in present]

    def _null_keys(self, conn: Any, table: str, cols: list[str]) -> Iterator[RowProblem]:
        cur = conn.cursor()
        cur.execute(f"SELECT {', '.join(cols)} FROM {table} WHERE trace_id IS NULL")
        for values in cur:
            row = dict(zip(cols, values, strict=True))
            detail = f"{table}: trace_id is NULL"
            yield RowProblem(table, NULL_REQUIRED, detail, row)
        cur.close()

    def _session_pages(self, conn: Any, cols: list[str]) -> Iterator[list[dict[str, Any]]]:
        select = ", ".join(cols)
        if self.dialect == "postgresql":
            with conn.cursor(name="golden_evidence_sessions") as cur:
                cur.itersize = self.chunk
                cur.execute(
                    f"SELECT {select} FROM {SESSION} WHERE trace_id IS NOT NULL ORDER BY trace_id"
                )
                while page := cur.fetchmany(self.chunk):
                    yield [dict(zip(cols, v, strict=True)) for v in page]
            return
        base = f"SELECT rowid, {select} FROM {SESSION} WHERE trace_id IS NOT NULL"
        order = f"ORDER BY trace_id, rowid LIMIT {int(self.chunk)}"
        page = conn.execute(f"{base} {order}").fetchall()
        while page:
            yield [dict(zip(cols, v[1:], strict=True)) for v in page]
            last = page[-1]
            page = conn.execute(
                f"{base} AND (trace_id, rowid) > (?, ?) {order}",
                (last[1 + cols.index("trace_id")], last[0]),
            ).fetchall()

    def _by_trace(
        self, conn: Any, table: str, cols: list[str] | None, ids: Sequence[Any], order: str
    ) -> dict[str, list[dict[str, Any]]]:
        grouped: dict[str, list[dict[str, Any]]] = {}
        if cols is None or not ids:
            return grouped
        if self.dialect == "postgresql":
            where, params = "trace_id = ANY(%s)", [list(ids)]
        else:
            where, params = f"trace_id IN ({', '.join('?' * len(ids))})", list(ids)
        cur = conn.cursor()
        cur.execute(f"SELECT {', '.join(cols)} FROM {table} WHERE {where} ORDER BY {order}", params)
        for values in cur:
            row = dict(zip(cols, values, strict=True))
            grouped.setdefault(str(row["trace_id"]), []).append(row)
        cur.close()
        return grouped

    def _traces(
        self, conn: Any, cols: dict[str, list[str] | None]
    ) -> Iterator[TraceRows | RowProblem]:
        pairer = TracePairer()
        for page in self._session_pages(conn, cols[SESSION] or []):
            # ids keep the column's own type (TEXT, BIGINT, UUID...) so the lookup uses its index
            ids = list({s["trace_id"]: None for s in page})
            calls = self._by_trace(conn, CALLS, cols[CALLS], ids, "trace_id, call_seq")
            snaps = self._by_trace(conn, SNAPSHOT, cols[SNAPSHOT], ids, "trace_id")
            yield from pairer.pair(page, snaps, calls)

    def _orphans(self, conn: Any, table: str, cols: list[str], reason: str) -> Iterator[RowProblem]:
        """Rows of ``table`` whose trace is NULL or not in session_trace (streamed)."""
        select = ", ".join(f"t.{c}" for c in cols)
        sql = (
            f"SELECT {select} FROM {table} t WHERE t.trace_id IS NULL OR NOT EXISTS "
            f"(SELECT 1 FROM {SESSION} s WHERE s.trace_id = t.trace_id)"
        )
        cur = (
            conn.cursor(name=f"golden_evidence_{table}_orphans")
            if self.dialect == "postgresql"
            else conn.cursor()
        )
        try:
            cur.execute(sql)
            for values in cur:
                row = dict(zip(cols, values, strict=True))
                key = "call_id" if table == CALLS else "snapshot_id"
                if row["trace_id"] is None:
                    detail = f"{table} {key}={row.get(key)}: trace_id is NULL"
                    yield RowProblem(table, NULL_REQUIRED, detail, row)
                else:
                    detail = f"{table} {key}={row.get(key)}: trace {row['trace_id']} not found"
                    yield RowProblem(table, reason, detail, row)
        finally:
            cur.close()
