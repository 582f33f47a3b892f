"""Result tables: regression_diff_result and run_summary rows with the seed's columns and enums,
as Parquet/JSON and appended into SQLite and PostgreSQL (tables created when absent)."""

from __future__ import annotations

import sqlite3

import orjson
import pyarrow.parquet as pq
import pytest
import replay_agents as agents

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import replay_cases
from golden_distill.datasets.replay.diffs import DIFF_TYPES, SEVERITIES
from golden_distill.datasets.replay.results import (
    DIFF_SCHEMA,
    SUMMARY_COLUMNS,
    ResultsError,
    write_outputs,
    write_sql,
)

DIFF_COLUMNS = ["diff_id", "run_id", "case_id", "trace_id", "diff_type", "diff_detail",
                "severity", "old_version", "new_version", "created_at"]  # fmt: skip


@pytest.fixture(scope="module")
def run(generated_set):
    golden = open_set(*generated_set)
    cases = [c.case for c in golden.cases()][:60]
    return replay_cases(
        cases, agents.change_amount, baseline_version=f"{golden.name}@{golden.version}",
        new_version="2.0.0-test", volatile_keys=golden.volatile_keys,
    )  # fmt: skip


def test_parquet_and_summary_have_the_seed_columns(run, tmp_path) -> None:
    paths = write_outputs(run, tmp_path)
    table = pq.read_table(paths["diffs"])
    assert table.schema.names == DIFF_COLUMNS == DIFF_SCHEMA.names
    rows = table.to_pylist()
    assert rows and len(rows) == sum(len(r.check.diffs) for r in run.runs)
    assert {r["diff_type"] for r in rows} <= set(DIFF_TYPES)
    assert {r["severity"] for r in rows} <= set(SEVERITIES)
    assert len({r["diff_id"] for r in rows}) == len(rows)
    assert {r["new_version"] for r in rows} == {"2.0.0-test"}
    # old_version: the agent version each case was recorded with, not the set's ref
    recorded = {r.case.case_id: r.case.agent.agent_version for r in run.runs}
    assert all(r["old_version"] == recorded[r["case_id"]] for r in rows)
    assert {r["old_version"] for r in rows} and None not in {r["old_version"] for r in rows}
    detail = orjson.loads(rows[0]["diff_detail"])
    assert set(detail) >= {"message", "recorded", "replayed", "is_write", "tool", "position",
                           "tolerances"}  # fmt: skip
    summary = orjson.loads(paths["summary"].read_bytes())
    assert list(summary)[: len(SUMMARY_COLUMNS)] == list(SUMMARY_COLUMNS)
    assert summary["cases"] == 60 and summary["diffs"] == len(rows)
    assert summary["high_severity"] == sum(r["severity"] == "high" for r in rows)
    assert summary["gate"] == "fail" and summary["exit_code"] == 1


def _check_sql(rows_diff: list, rows_summary: list, run) -> None:
    assert len(rows_diff) == sum(len(r.check.diffs) for r in run.runs)
    assert rows_summary[0][0] == run.run_id and rows_summary[0][7] == "fail"


def test_sqlite_tables_created_then_appended(run, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'results' / 'replay.db'}"
    write_sql(run, url)
    with sqlite3.connect(tmp_path / "results" / "replay.db") as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(regression_diff_result)")]
        assert columns == DIFF_COLUMNS
        summary_columns = [r[1] for r in conn.execute("PRAGMA table_info(run_summary)")]
        assert summary_columns == list(SUMMARY_COLUMNS)
        diffs = conn.execute("SELECT * FROM regression_diff_result").fetchall()
        summary = conn.execute("SELECT * FROM run_summary").fetchall()
        _check_sql(diffs, summary, run)
        with pytest.raises(sqlite3.IntegrityError):  # the enums are enforced by the table
            conn.execute(
                "INSERT INTO regression_diff_result (diff_id, run_id, case_id, diff_type, "
                "severity) VALUES ('x', 'r', 'c', 'not_a_type', 'high')"
            )
    with pytest.raises(sqlite3.IntegrityError):  # the same run twice: a key error, no dupes
        write_sql(run, url)


@pytest.mark.postgres
def test_postgres_tables_created_then_appended(run, pg_url) -> None:
    import psycopg

    write_sql(run, pg_url)
    with psycopg.connect(pg_url) as conn:
        diffs = conn.execute("SELECT * FROM regression_diff_result").fetchall()
        summary = conn.execute("SELECT * FROM run_summary").fetchall()
        columns = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = "
                "'regression_diff_result' AND table_schema = current_schema() "
                "ORDER BY ordinal_position"
            )
        ]
    assert columns == DIFF_COLUMNS
    _check_sql(diffs, summary, run)


def test_an_unknown_results_url_is_refused(run) -> None:
    with pytest.raises(ResultsError, match="expected sqlite"):
        write_sql(run, "mysql://user:secret@host/db")
