"""The replay's result tables, as the seed defines them: ``regression_diff_result`` (one row per
difference) and ``run_summary`` (one row per run), written as Parquet/JSON and, on request, into
SQLite or PostgreSQL (tables created if absent, rows appended)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.replay.diffs import DIFF_TYPES, SEVERITIES, Diff
from golden_distill.datasets.replay.gate import FAIL, PASS, WARN
from golden_distill.datasets.replay.runner import ReplayRun
from golden_distill.datasets.sources.evidence_sql import redact_url, sql_dialect, sqlite_path

DIFFS_TABLE = "regression_diff_result"
SUMMARY_TABLE = "run_summary"
GATE_VALUES = (PASS, WARN, FAIL)
_TS = pa.timestamp("ms", tz="UTC")

DIFF_SCHEMA = pa.schema(
    [
        pa.field("diff_id", pa.string(), nullable=False),
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("case_id", pa.string(), nullable=False),
        pa.field("trace_id", pa.string()),
        pa.field("diff_type", pa.string(), nullable=False),
        # JSON: {message, recorded, replayed, is_write, tool, position, tolerances, seen, repeats}
        pa.field("diff_detail", pa.string()),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("old_version", pa.string()),  # the agent version the case was recorded with
        pa.field("new_version", pa.string()),  # the agent version replayed
        pa.field("created_at", _TS),
    ]
)
SUMMARY_COLUMNS = ("run_id", "baseline_version", "new_version", "cases", "cases_with_diffs",
                   "diffs", "high_severity", "gate", "started_at", "finished_at")  # fmt: skip


class ResultsError(ValueError):
    """The results URL is not usable (names the URL without its password)."""


def diff_rows(run: ReplayRun) -> list[dict[str, Any]]:
    rows = []
    for case_run in run.runs:
        for n, diff in enumerate(case_run.check.diffs, 1):
            key = f"{run.run_id}\x1f{diff.case_id}\x1f{n}"
            rows.append(
                {
                    "diff_id": "d_" + hashlib.sha256(key.encode()).hexdigest()[:24],
                    "run_id": run.run_id,
                    "case_id": diff.case_id,
                    "trace_id": diff.trace_id,
                    "diff_type": diff.diff_type,
                    "diff_detail": orjson.dumps(detail_of(diff)).decode(),
                    "severity": diff.severity,
                    "old_version": case_run.case.agent.agent_version,
                    "new_version": run.new_version,
                    "created_at": run.finished_at,
                }
            )
    return rows


def detail_of(diff: Diff) -> dict[str, Any]:
    """The ``diff_detail`` JSON of one row: what differs, where, what was forgiven."""
    detail: dict[str, Any] = {
        "message": diff.detail,
        "recorded": diff.recorded,
        "replayed": diff.replayed,
        "is_write": diff.is_write,
        "tool": diff.tool,
        "position": diff.position,
        "tolerances": list(diff.tolerances),
    }
    if diff.repeats is not None:
        detail["seen"], detail["repeats"] = diff.seen, diff.repeats
    if "basis" in diff.extra:
        detail["basis"] = diff.extra["basis"]
    return detail


def summary_row(run: ReplayRun) -> dict[str, Any]:
    diffs = [d for r in run.runs for d in r.check.diffs]
    return {
        "run_id": run.run_id,
        "baseline_version": run.baseline_version,
        "new_version": run.new_version,
        "cases": len(run.runs),
        "cases_with_diffs": sum(1 for r in run.runs if r.check.diffs),
        "diffs": len(diffs),
        "high_severity": sum(1 for d in diffs if d.severity == "high"),
        "gate": run.gate.verdict,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


def diffs_table(run: ReplayRun) -> pa.Table:
    return pa.Table.from_pylist(diff_rows(run), schema=DIFF_SCHEMA)


def write_outputs(run: ReplayRun, out_dir: Path) -> dict[str, Path]:
    """``regression_diff_result.parquet`` and ``run_summary.json`` (row + gate lines + figures)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    diffs_path = out_dir / f"{DIFFS_TABLE}.parquet"
    pq.write_table(diffs_table(run), diffs_path)
    summary = {
        **summary_row(run),
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat(),
        "gate_lines": run.gate.to_dict()["lines"],
        "figures": run.figures,
        "exit_code": run.exit_code,
        "recorded_versions": run.recorded_versions,
        "diffs_by_type": dict(Counter(d.diff_type for r in run.runs for d in r.check.diffs)),
        "tolerated": dict(sum((Counter(r.check.tolerated) for r in run.runs), Counter())),
    }
    repeats = {r.check.repeats for r in run.runs if r.check.repeats}
    if repeats:
        summary["repeats"] = max(repeats)
        summary["flaky_cases"] = sorted(r.case.case_id for r in run.runs if r.check.flaky)
    summary_path = out_dir / f"{SUMMARY_TABLE}.json"
    summary_path.write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    return {"diffs": diffs_path, "summary": summary_path}


def _ddl(dialect: str) -> list[str]:
    ts = "TEXT" if dialect == "sqlite" else "TIMESTAMPTZ"
    types = ", ".join(f"'{t}'" for t in DIFF_TYPES)
    severities = ", ".join(f"'{s}'" for s in SEVERITIES)
    gates = ", ".join(f"'{g}'" for g in GATE_VALUES)
    return [
        f"CREATE TABLE IF NOT EXISTS {DIFFS_TABLE} (diff_id TEXT PRIMARY KEY, "
        "run_id TEXT NOT NULL, case_id TEXT NOT NULL, trace_id TEXT, "
        f"diff_type TEXT NOT NULL CHECK (diff_type IN ({types})), diff_detail TEXT, "
        f"severity TEXT NOT NULL CHECK (severity IN ({severities})), old_version TEXT, "
        f"new_version TEXT, created_at {ts})",
        f"CREATE INDEX IF NOT EXISTS {DIFFS_TABLE}_run ON {DIFFS_TABLE} (run_id, case_id)",
        f"CREATE TABLE IF NOT EXISTS {SUMMARY_TABLE} (run_id TEXT PRIMARY KEY, "
        "baseline_version TEXT, new_version TEXT, cases INTEGER NOT NULL, "
        "cases_with_diffs INTEGER NOT NULL, diffs INTEGER NOT NULL, "
        f"high_severity INTEGER NOT NULL, gate TEXT NOT NULL CHECK (gate IN ({gates})), "
        f"started_at {ts}, finished_at {ts})",
    ]


def _values(row: dict[str, Any], columns: Sequence[str], dialect: str) -> list[Any]:
    values = [row[c] for c in columns]
    if dialect == "sqlite":
        values = [v.isoformat() if isinstance(v, datetime) else v for v in values]
    return values


def write_sql(run: ReplayRun, url: str) -> None:
    """Append this run's rows to ``url`` (``sqlite:///path.db`` or ``postgresql://...``)."""
    dialect = sql_dialect(url)
    if dialect is None:
        raise ResultsError(f"--results {redact_url(url)}: expected sqlite:/// or postgresql://")
    diff_columns = DIFF_SCHEMA.names
    diffs = [_values(r, diff_columns, dialect) for r in diff_rows(run)]
    summary = [_values(summary_row(run), SUMMARY_COLUMNS, dialect)]
    mark = "?" if dialect == "sqlite" else "%s"
    insert_diff = (
        f"INSERT INTO {DIFFS_TABLE} ({', '.join(diff_columns)}) "
        f"VALUES ({', '.join([mark] * len(diff_columns))})"
    )
    insert_summary = (
        f"INSERT INTO {SUMMARY_TABLE} ({', '.join(SUMMARY_COLUMNS)}) "
        f"VALUES ({', '.join([mark] * len(SUMMARY_COLUMNS))})"
    )
    if dialect == "sqlite":
        path = sqlite_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as conn:
            for statement in _ddl(dialect):
                conn.execute(statement)
            conn.executemany(insert_diff, diffs)
            conn.executemany(insert_summary, summary)
        conn.close()
        return
    # optional: psycopg only for postgresql:// results (the `pipeline` extra)
    import psycopg

    try:
        target = url.replace("postgres://", "postgresql://", 1)
        with psycopg.connect(target) as conn, conn.cursor() as cur:
            for statement in _ddl(dialect):
                cur.execute(statement)
            cur.executemany(insert_diff, diffs)
            cur.executemany(insert_summary, summary)
    except psycopg.Error as exc:
        raise ResultsError(
            f"--results {redact_url(url)}: {type(exc).__name__} writing the results"
        ) from None
