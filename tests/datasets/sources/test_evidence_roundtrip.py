"""Evidence round trip: cases -> tables (files, SQLite, PostgreSQL) -> equal cases."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from golden_test_data import airline_runs_path

from golden_distill.datasets.case import Agent, Case, Chunk, Context, Intent, Outcome, Step
from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.quarantine import Quarantine, read_quarantine
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.evidence import EvidenceAdapter
from golden_distill.datasets.sources.evidence_writer import export_evidence
from golden_distill.synthetic import generate_corpus

AIRLINE = airline_runs_path()


def read_all(uri: str, tmp_path: Path, config: IngestConfig | None = None):
    qpath = tmp_path / f"q-{uuid.uuid4().hex}.jsonl"
    quarantine = Quarantine(qpath)
    rows = list(EvidenceAdapter(config).read(uri, quarantine, ReadStats()))
    quarantine.close()
    return rows, read_quarantine(qpath)


def rich_cases() -> list[dict]:
    """Cases with every field the evidence tables can carry filled, plus sparse ones."""
    t0 = datetime(2026, 11, 28, 2, 14, 0, 123000, tzinfo=UTC)
    full = Case(
        case_id=make_case_id("native", "r-1"),
        trace_id="tr-1",
        session_id="s-4",
        turn_index=2,
        tenant_id="t-9",
        user_id="u-7",
        recorded_at=t0,
        agent=Agent(
            "2.3.1", "provider/model", '{"temperature":0,"top_p":1,"seed":3}', "sha256:ab", "{}"
        ),
        user_input="refund ORD-1 please",
        intent=Intent("refund", 0.93),
        context=Context(
            messages='[{"role":"user","content":"hi"}]',
            memory='{"tier":"gold"}',
            retrieved_chunks=[
                Chunk("Refunds take 5 days", "kb@41", "refund"),
                Chunk("x", None, None),
            ],
            env_versions='{"erp_api":"v7"}',
            baseline_state='{"order:ORD-1":"PENDING"}',
        ),
        steps=[
            Step(
                0,
                "tool",
                "erp_get_order",
                1,
                "ok",
                None,
                '{"orderId":"ORD-1"}',
                None,
                '{"amount":120.5}',
                None,
                False,
                "ERP",
                83,
                12,
                t0,
            ),
            Step(
                1,
                "tool",
                "erp_refund",
                1,
                "error",
                0,
                '{"orderId":"ORD-1","amount":120.5}',
                None,
                None,
                "upstream 503",
                True,
                "FINANCE",
                3000,
                None,
                t0,
            ),
            Step(
                2,
                "model",
                "llm",
                1,
                "ok",
                None,
                None,
                None,
                '"thinking"',
                None,
                None,
                None,
                900,
                300,
                None,
            ),
            Step(
                3,
                "handoff",
                "escalate",
                1,
                "timeout",
                None,
                "{}",
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
            ),
        ],
        outcome=Outcome("done", "REFUNDED", "success", False, None, True, 1.0),
    ).to_row()
    sparse = Case(case_id=make_case_id("native", "r-2"), trace_id="tr-2").to_row()
    no_context = Case(
        case_id=make_case_id("native", "r-3"),
        trace_id="tr-3",
        steps=[Step(0, "tool", "transfer_to_human_agents", 1)],
        outcome=Outcome(handoff=True, handoff_reason="asked"),
    ).to_row()
    return [full, sparse, no_context]


def finish_hashes(rows: list[dict]) -> list[dict]:
    """Give hand-built steps the argument hash every reader computes (default volatile keys)."""
    from golden_distill.datasets.canonical_json import canonical_args_sha256

    for row in rows:
        for step in row["steps"]:
            if step["arguments"] is not None:
                step["canonical_args_sha256"] = canonical_args_sha256(step["arguments"])
    return rows


def assert_same_cases(original: list[dict], back: list[dict]) -> None:
    assert len(back) == len(original)
    by_id = {r["case_id"]: Case.from_row(r) for r in original}
    for row in back:
        case = Case.from_row(row)
        assert case.source.format == "evidence"
        assert case.source.source_record_id == case.trace_id
        expected = by_id[case.case_id]
        case.source = expected.source
        assert case == expected


@pytest.fixture(scope="module")
def airline_cases() -> list[dict]:
    return list(ChatAdapter().read(str(AIRLINE), Quarantine(), ReadStats()))


@pytest.fixture(scope="module")
def generated_cases(tmp_path_factory) -> list[dict]:
    """Canonical cases of a small synthetic corpus, read by the native reader."""
    work = tmp_path_factory.mktemp("generated")
    generate_corpus(work / "corpus", sessions=120, seed=11, broken_per_kind=0)
    summary = ingest([str(work / "corpus")], work / "out", fmt="native")
    rows = [row for shard in summary.shards for row in pq.read_table(shard).to_pylist()]
    assert len(rows) == summary.cases_written > 120
    return rows


@pytest.fixture(scope="module")
def all_cases(airline_cases, generated_cases) -> list[dict]:
    return finish_hashes(rich_cases()) + airline_cases + generated_cases


# ---------------------------------------------------------------------------------------------
# round trips: cases -> tables -> equal cases


@pytest.mark.parametrize("kind", ["sqlite", "parquet", "csv"])
def test_round_trip_files_and_sqlite(tmp_path, kind, all_cases) -> None:
    cases = all_cases
    target = f"sqlite:///{tmp_path / 'ev.db'}" if kind == "sqlite" else str(tmp_path / kind)
    counts = export_evidence(cases, target, file_format="csv" if kind == "csv" else "parquet")
    assert counts.rows["session_trace"] == len(cases)
    back, entries = read_all(target, tmp_path)
    assert entries == []
    assert_same_cases(cases, back)


@pytest.mark.postgres
def test_round_trip_postgres(tmp_path, pg_url, all_cases) -> None:
    cases = all_cases
    counts = export_evidence(cases, pg_url)
    assert counts.rows["tool_call_trace"] == sum(len(c["steps"]) for c in cases)
    back, entries = read_all(pg_url, tmp_path, IngestConfig(sql_chunk_traces=16))
    assert entries == []
    assert_same_cases(cases, back)
