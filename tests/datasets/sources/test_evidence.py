"""Evidence tables adapter: SQLite, PostgreSQL and Parquet/CSV folders -> cases, and back."""

from __future__ import annotations

import json
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path

import fsspec
import pyarrow as pa
import pytest
from golden_test_data import airline_runs_path

from golden_distill.datasets.quarantine import Quarantine, read_quarantine
from golden_distill.datasets.schema import CASE_SCHEMA, make_case_id
from golden_distill.datasets.sources.base import ReadStats, SourceError
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.evidence import EvidenceAdapter
from golden_distill.datasets.sources.evidence_sql import redact_url
from golden_distill.datasets.sources.evidence_writer import export_evidence
from golden_distill.datasets.sources.registry import ADAPTERS

FIXTURES = Path(__file__).parent / "fixtures"
AIRLINE = airline_runs_path()


# ---------------------------------------------------------------------------------------------
# helpers


def read_all(uri: str, tmp_path: Path, config: IngestConfig | None = None):
    qpath = tmp_path / f"q-{uuid.uuid4().hex}.jsonl"
    quarantine = Quarantine(qpath)
    stats = ReadStats()
    rows = list(EvidenceAdapter(config).read(uri, quarantine, stats))
    quarantine.close()
    return rows, read_quarantine(qpath), stats


def load_sql_fixture(execute) -> None:
    script = (FIXTURES / "evidence_broken.sql").read_text()
    lines = [line for line in script.splitlines() if not line.startswith("--")]
    for statement in "\n".join(lines).split(";"):
        if statement.strip():
            execute(statement)


@pytest.fixture(scope="module")
def airline_cases() -> list[dict]:
    return list(ChatAdapter().read(str(AIRLINE), Quarantine(), ReadStats()))


def sqlite_fixture(tmp_path: Path) -> str:
    path = tmp_path / "evidence.db"
    with sqlite3.connect(path) as conn:
        load_sql_fixture(conn.execute)
    return f"sqlite:///{path}"


def postgres_fixture(url: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        load_sql_fixture(conn.execute)
    return url


# ---------------------------------------------------------------------------------------------
# broken fixtures: the same hand-written tables from SQLite, PostgreSQL and CSV files


def check_broken_fixture(uri: str, tmp_path: Path) -> None:
    rows, entries, stats = read_all(uri, tmp_path)
    assert [r["trace_id"] for r in rows] == ["t1", "t2", "t5", "t6"]
    assert sorted(e["reason"] for e in entries) == sorted(
        [
            "null_required",  # session row without trace id
            "null_required",  # t3: call with NULL tool_name
            "null_required",  # call c8 without trace id
            "malformed_arguments",  # t4
            "duplicate_trace",  # second t5
            "orphan_call",  # c7 -> ghost
            "orphan_snapshot",  # snap-x -> ghost2
        ]
    )
    details = " ".join(e["detail"] for e in entries)
    assert "ghost" in details and "c5" in details and "c6" in details
    assert "refund order 7" not in details  # no record text in details
    assert all("raw" in e for e in entries)  # nothing lost
    pa.Table.from_pylist(rows, schema=CASE_SCHEMA)

    t1, t2, t5, t6 = rows
    assert [s["name"] for s in t1["steps"]] == [
        "erp_get_order",
        "erp_get_order",
        "erp_refund_order",
    ]
    assert [s["seq"] for s in t1["steps"]] == [0, 1, 2]
    assert [s["status"] for s in t1["steps"]] == ["ok", "timeout", "ok"]
    assert [s["occurrence"] for s in t1["steps"]] == [1, 2, 1]
    assert [s["system"] for s in t1["steps"]] == ["ERP", "ERP", "ERP"]
    assert json.loads(t1["steps"][1]["response"]) == "upstream timed out"
    assert t1["steps"][0]["latency_ms"] == 83
    assert t1["steps"][0]["started_at"] == datetime(2026, 11, 28, 2, 14, 1, tzinfo=UTC)
    assert t1["recorded_at"] == datetime(2026, 11, 28, 2, 14, 0, 123000, tzinfo=UTC)
    assert t1["intent"] == {"name": "refund", "confidence": 0.93}
    assert t1["user_input"] == "refund order 7"
    assert json.loads(t1["agent"]["model_params"]) == {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 512,
    }
    assert t1["agent"]["system_prompt_version"].startswith("sha256:")
    assert t1["context"]["retrieved_chunks"] == [
        {"text": "Refunds take 5 days", "index_snapshot_id": "kb@41", "query": "refund time"}
    ]
    assert json.loads(t1["context"]["memory"]) == {"tier": "gold"}
    assert t1["outcome"]["status"] == "success"
    assert t1["case_id"] == make_case_id("evidence", "t1")

    assert t2["context"]["messages"] is None and t2["agent"]["model_params"] is None  # no snapshot
    assert t2["steps"][0]["kind"] == "handoff" and t2["steps"][0]["status"] == "error"
    assert t2["outcome"]["handoff"] is True
    assert t5["user_input"] == "first copy"
    assert t6["steps"] == [] and t6["session_id"] is None
    assert stats.cases == 4
    assert stats.extra["traces_without_snapshot"] == 3


def test_registered_under_evidence() -> None:
    assert ADAPTERS["evidence"] is EvidenceAdapter


def test_sqlite_broken_fixture(tmp_path) -> None:
    check_broken_fixture(sqlite_fixture(tmp_path), tmp_path)


def test_csv_folder_broken_fixture(tmp_path) -> None:
    check_broken_fixture(str(FIXTURES / "evidence_csv"), tmp_path)


@pytest.mark.postgres
def test_postgres_broken_fixture(tmp_path, pg_url) -> None:
    check_broken_fixture(postgres_fixture(pg_url), tmp_path)


def test_small_chunks_read_everything_in_order(tmp_path, airline_cases) -> None:
    url = f"sqlite:///{tmp_path / 'ev.db'}"
    export_evidence(airline_cases, url)
    export_evidence(airline_cases, str(tmp_path / "pq"))
    config = IngestConfig(sql_chunk_traces=7, evidence_bucket_rows=100)
    sql_rows, _, _ = read_all(url, tmp_path, config)
    file_rows, _, _ = read_all(str(tmp_path / "pq"), tmp_path, config)
    trace_ids = sorted(c["trace_id"] for c in airline_cases)
    assert [r["trace_id"] for r in sql_rows] == trace_ids
    assert sorted(r["trace_id"] for r in file_rows) == trace_ids
    assert [r["source"]["position"] for r in sql_rows] == list(range(1, 201))


# ---------------------------------------------------------------------------------------------
# sniffing and whole-input errors


def test_sniff(tmp_path, airline_cases) -> None:
    export_evidence(airline_cases[:3], str(tmp_path / "pq"))
    assert EvidenceAdapter.sniff("sqlite:///x.db", b"")
    assert EvidenceAdapter.sniff("postgresql://u@h/db", b"")
    assert EvidenceAdapter.sniff(str(tmp_path / "pq"), b"")
    assert EvidenceAdapter.sniff(str(tmp_path / "pq" / "session_trace.parquet"), b"PAR1")
    assert EvidenceAdapter.sniff(str(FIXTURES / "evidence_csv"), b"")
    assert not EvidenceAdapter.sniff(str(FIXTURES), b"")
    assert not EvidenceAdapter.sniff(str(FIXTURES / "chat_mixed.jsonl"), b'{"messages": []}')
    assert not EvidenceAdapter.sniff("s3://bucket/x.jsonl", b"{")


def test_unusable_inputs_raise_clear_errors(tmp_path) -> None:
    with pytest.raises(SourceError, match="no such SQLite"):
        read_all(f"sqlite:///{tmp_path / 'missing.db'}", tmp_path)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    with pytest.raises(SourceError, match="session_trace not found"):
        read_all(f"sqlite:///{empty}", tmp_path)
    with pytest.raises(SourceError, match="session_trace"):
        read_all(str(tmp_path), tmp_path)


def test_password_never_shown() -> None:
    shown = redact_url("postgresql://alice:s3cret@db.example:5432/evidence")
    assert "s3cret" not in shown and "alice" in shown and "db.example:5432" in shown


def test_postgres_connection_error_hides_password(tmp_path) -> None:
    with pytest.raises(SourceError) as info:
        read_all("postgresql://alice:s3cret@127.0.0.1:1/nowhere?connect_timeout=2", tmp_path)
    assert "s3cret" not in str(info.value)


def test_exporting_a_trace_twice_is_a_clear_error(tmp_path, airline_cases) -> None:
    url = f"sqlite:///{tmp_path / 'ev.db'}"
    export_evidence(airline_cases[:2], url)
    with pytest.raises(SourceError, match="session_trace: a key is already taken"):
        export_evidence(airline_cases[1:3], url)
    rows, _, _ = read_all(url, tmp_path)
    assert len(rows) == 2  # the failed batch was rolled back


NATIVE_TYPES_DDL = [
    "CREATE TABLE session_trace (trace_id BIGINT PRIMARY KEY, session_id TEXT, start_time {ts})",
    "CREATE TABLE tool_call_trace (call_id BIGINT, trace_id BIGINT, call_seq INT, tool_name TEXT,"
    " tool_input {js}, tool_output {js}, tool_status TEXT)",
    "INSERT INTO session_trace VALUES (1, 's', '2026-01-01T00:00:00Z'), (2, 's', NULL)",
    "INSERT INTO tool_call_trace VALUES"
    " (10, 1, 0, 'erp_get', '{{\"a\": 1}}', '{{\"b\": 2}}', 'ok'),"
    " (11, 2, 0, 'x', NULL, NULL, NULL), (12, 3, 0, 'y', NULL, NULL, NULL)",
]


def check_native_types(uri: str, tmp_path: Path) -> None:
    """Integer trace ids, JSON columns and real timestamps read like text ones."""
    rows, entries, _ = read_all(uri, tmp_path)
    assert [e["reason"] for e in entries] == ["orphan_call"]
    assert [r["trace_id"] for r in rows] == ["1", "2"]
    assert json.loads(rows[0]["steps"][0]["arguments"]) == {"a": 1}
    assert json.loads(rows[0]["steps"][0]["response"]) == {"b": 2}
    assert rows[0]["recorded_at"] == datetime(2026, 1, 1, tzinfo=UTC)
    assert rows[1]["steps"][0]["arguments"] is None


def test_sqlite_native_column_types(tmp_path) -> None:
    path = tmp_path / "typed.db"
    with sqlite3.connect(path) as conn:
        for statement in NATIVE_TYPES_DDL:
            conn.execute(statement.format(ts="TEXT", js="TEXT"))
    check_native_types(f"sqlite:///{path}", tmp_path)


@pytest.mark.postgres
def test_postgres_native_column_types(tmp_path, pg_url) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement in NATIVE_TYPES_DDL:
            conn.execute(statement.format(ts="TIMESTAMPTZ", js="JSONB"))
    check_native_types(pg_url, tmp_path)


def to_memory_fs(local: Path) -> str:
    """Copy a local evidence folder into fsspec's in-memory filesystem; return its URL."""
    fs = fsspec.filesystem("memory")
    root = f"/evidence-{uuid.uuid4().hex[:8]}"
    for path in local.iterdir():
        fs.put_file(str(path), f"{root}/{path.name}")
    return f"memory://{root}"


def test_broken_csv_fixture_behind_an_fsspec_url(tmp_path) -> None:
    url = to_memory_fs(FIXTURES / "evidence_csv")
    assert EvidenceAdapter.sniff(url, b"")
    check_broken_fixture(url, tmp_path)


@pytest.mark.parametrize("file_format", ["parquet", "csv"])
def test_fsspec_folder_reads_like_a_local_one(tmp_path, airline_cases, file_format) -> None:
    local = tmp_path / file_format
    export_evidence(airline_cases, str(local), file_format=file_format)
    url = to_memory_fs(local)
    remote_rows, entries, _ = read_all(url, tmp_path, IngestConfig(evidence_bucket_rows=400))
    local_rows, _, _ = read_all(str(local), tmp_path, IngestConfig(evidence_bucket_rows=400))
    assert entries == [] and len(remote_rows) == 200
    assert all(r["source"]["uri"] == url for r in remote_rows)
    direct = f"memory://evidence-direct-{uuid.uuid4().hex[:8]}"
    export_evidence(airline_cases, direct, file_format=file_format)  # the writer speaks fsspec too
    direct_rows, _, _ = read_all(direct, tmp_path, IngestConfig(evidence_bucket_rows=400))
    for row in remote_rows + local_rows + direct_rows:
        row["source"]["uri"] = None
    assert remote_rows == local_rows == direct_rows
