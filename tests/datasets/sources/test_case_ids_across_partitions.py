"""Case ids are unique across ``dt=`` partitions of same-named files, for every source format,
and stable across reruns; the identity check tells the same record read twice (fine) from two
different records under one id (an error naming both places)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import polars as pl
import pytest
from golden_test_data import airline_runs_path

from golden_distill.datasets.case_identity import (
    CaseIdCollision,
    collision_error,
    conflicting_ids,
    identity_frame,
)
from golden_distill.datasets.ingest import ingest_table
from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.discovery import discover
from golden_distill.datasets.sources.evidence_writer import export_evidence
from golden_distill.datasets.sources.identity import source_name
from golden_distill.datasets.sources.otel_writer import write_otlp_jsonl

DAYS = ("2026-11-01", "2026-11-02")


@pytest.fixture(scope="module")
def airline_cases() -> list[dict]:
    """Airline runs with tool calls (evidence tables need a call per trace)."""
    cases = ChatAdapter().read(str(airline_runs_path()), Quarantine(), ReadStats())
    return [case for case in cases if case["steps"]]


def _native_line(record_id: str, text: str) -> bytes:
    record = {
        "recordId": record_id,
        "tenantId": "t-1",
        "sessionId": f"s-{record_id}",
        "turnIndex": 0,
        "recordedAt": "2026-11-01T02:00:00Z",
        "initialUserInput": text,
        "toolCalls": [{"stepIndex": 0, "toolName": "erp_get_order", "arguments": {"id": 1}}],
        "finalOutputText": "done",
    }
    return orjson.dumps(record) + b"\n"


def _partitions(root: Path, name: str) -> list[Path]:
    folders = [root / f"dt={day}" for day in DAYS]
    for folder in folders:
        folder.mkdir(parents=True)
    return [folder / name for folder in folders]


def _write_chat(root: Path) -> None:
    runs = json.loads(airline_runs_path().read_text())[:4]
    for path in _partitions(root, "runs.json"):  # the very same runs at the same positions
        path.write_text(json.dumps(runs))


def _write_native(root: Path) -> None:
    for day, path in zip(DAYS, _partitions(root, "runs.jsonl"), strict=True):
        path.write_bytes(b"".join(_native_line(f"{day}-r{i}", f"ask {i}") for i in range(3)))


def _write_otel(root: Path, cases: list[dict]) -> None:
    for at, path in enumerate(_partitions(root, "spans.jsonl")):
        write_otlp_jsonl(cases[at * 3 : at * 3 + 3], path)


def _write_evidence(root: Path, cases: list[dict], file_format: str) -> None:
    for at, day in enumerate(DAYS):
        target = str(root / f"dt={day}")
        export_evidence(cases[at * 3 : at * 3 + 3], target, file_format=file_format)


def _write_sqlite(root: Path, cases: list[dict]) -> list[str]:
    urls = []
    for at, path in enumerate(_partitions(root, "evidence.db")):
        url = f"sqlite:///{path}"
        export_evidence(cases[at * 3 : at * 3 + 3], url)
        urls.append(url)
    return urls


def _sources(fmt: str, root: Path, cases: list[dict]) -> tuple[list[str], str]:
    """(sources, format) of two same-named partitions of ``fmt`` under ``root``."""
    if fmt == "chat":
        _write_chat(root)
        return [str(root)], "chat"
    if fmt == "native":
        _write_native(root)
        return [str(root)], "native"
    if fmt == "otel":
        _write_otel(root, cases)
        return [str(root)], "otel"
    if fmt in ("parquet", "csv"):
        _write_evidence(root, cases, fmt)
        return [str(root / f"dt={day}") for day in DAYS], "evidence"
    assert fmt == "sqlite"
    return _write_sqlite(root, cases), "evidence"


def _ids(sources: list[str], fmt: str, out: Path) -> tuple[list[str], pl.DataFrame]:
    table, summary = ingest_table(sources, out, fmt=fmt)
    assert not summary.failed and summary.quarantined_total == 0
    return table.column("case_id").to_pylist(), identity_frame(table)


@pytest.mark.parametrize("fmt", ["native", "chat", "otel", "parquet", "csv", "sqlite"])
def test_same_named_partitions_give_distinct_ids_stable_across_reruns(
    fmt, tmp_path, airline_cases
) -> None:
    sources, name = _sources(fmt, tmp_path / "data", airline_cases)
    first, identities = _ids(sources, name, tmp_path / "one")
    again, _ = _ids(sources, name, tmp_path / "two")
    assert len(first) >= 6
    assert len(set(first)) == len(first)  # distinct across the two partitions
    assert again == first  # stable across reruns
    assert conflicting_ids([identities]).len() == 0


@pytest.mark.postgres
def test_postgres_partitions_give_distinct_ids(tmp_path, airline_cases, pg_url) -> None:
    import psycopg

    second = pg_url.replace("search_path%3D", "search_path%3Dp2_")
    schema = second.rsplit("search_path%3D", 1)[1]
    with psycopg.connect(pg_url.split("?")[0], autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        export_evidence(airline_cases[:3], pg_url)
        export_evidence(airline_cases[3:6], second)
        first, _ = _ids([pg_url, second], "evidence", tmp_path / "one")
        again, _ = _ids([pg_url, second], "evidence", tmp_path / "two")
    finally:
        with psycopg.connect(pg_url.split("?")[0], autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    assert len(first) == 6 and len(set(first)) == 6 and again == first


def test_chat_ids_changed_only_where_files_could_collide(tmp_path) -> None:
    """A file directly in its source folder keeps its old id (base name + position); a
    partition's file gets its partition in the id."""
    runs = json.loads(airline_runs_path().read_text())[:2]
    flat = tmp_path / "flat" / "runs.json"
    flat.parent.mkdir()
    flat.write_text(json.dumps(runs))
    ids, _ = _ids([str(flat.parent)], "chat", tmp_path / "a")
    assert ids == [make_case_id("chat", f"runs.json:{n}") for n in (1, 2)]
    _write_chat(tmp_path / "nested")
    nested, _ = _ids([str(tmp_path / "nested")], "chat", tmp_path / "b")
    assert nested[:2] == [make_case_id("chat", f"dt=2026-11-01/runs.json:{n}") for n in (1, 2)]


def test_every_spelling_of_a_partition_names_it_alike(tmp_path) -> None:
    """The folder, the file, the partition folder and the date template: one name, so the
    nightly template and a catch-up by hand give the same ids."""
    _write_chat(tmp_path / "data")
    root = tmp_path / "data"
    day = root / "dt=2026-11-01"
    spellings = [str(root), str(day), str(day / "runs.json"), f"{root}/dt={{date}}/"]
    names = set()
    for source in spellings:
        found = discover(
            [source],
            since=datetime(2026, 11, 1, tzinfo=UTC),
            until=datetime(2026, 11, 2, tzinfo=UTC),
        )
        names |= {s.name for s in found.shards if "2026-11-01" in s.uri}
    assert names == {"dt=2026-11-01/runs.json"}
    assert source_name("s3://b/logs/*/r.jsonl", "s3://b/logs/2026/r.jsonl") == "2026/r.jsonl"
    assert source_name("memory://x/", "memory:///x/t=1/u=2/r.jsonl") == "t=1/u=2/r.jsonl"


def test_flow_shard_reads_with_its_partition_name(tmp_path) -> None:
    """The flow reads each shard alone; it hands the shard's name to the reader."""
    _write_chat(tmp_path / "data")
    shards = discover([str(tmp_path / "data")]).shards
    ids = []
    for at, shard in enumerate(shards):
        table, _ = ingest_table([shard.uri], tmp_path / f"s{at}", names={shard.uri: shard.name})
        ids += table.column("case_id").to_pylist()
    whole, _ = _ids([str(tmp_path / "data")], "chat", tmp_path / "whole")
    assert ids == whole and len(set(ids)) == len(ids)


# ---------------------------------------------------------------------------------------------
# the identity check


def test_the_same_record_twice_is_not_a_collision(tmp_path) -> None:
    _write_native(tmp_path / "data")
    a, b = sorted((tmp_path / "data").glob("dt=*/runs.jsonl"))
    shutil.copy(a, b)  # a backfill copied a night into the next partition
    _, identities = _ids([str(tmp_path / "data")], "native", tmp_path / "out")
    assert identities.get_column("case_id").is_duplicated().all()
    assert conflicting_ids([identities]).len() == 0


@pytest.mark.parametrize("fmt", ["native", "otel", "parquet"])
def test_two_different_records_under_one_id_name_both_places(fmt, tmp_path, airline_cases):
    """Producer ids that clash across partitions (same recordId / trace id, other content)."""
    root = tmp_path / "data"
    if fmt == "native":
        for path, text in zip(_partitions(root, "runs.jsonl"), ("one", "two"), strict=True):
            path.write_bytes(_native_line("r-1", text))
        sources = [str(root)]
    elif fmt == "otel":
        other = {**airline_cases[1], "trace_id": airline_cases[0]["trace_id"]}
        other["case_id"] = airline_cases[0]["case_id"]
        paths = _partitions(root, "spans.jsonl")
        for path, case in zip(paths, (airline_cases[0], other), strict=True):
            write_otlp_jsonl([case], path)
        sources = [str(root)]
    else:
        other = {**airline_cases[1], "case_id": airline_cases[0]["case_id"]}
        other["trace_id"] = airline_cases[0]["trace_id"]
        for day, case in zip(DAYS, (airline_cases[0], other), strict=True):
            export_evidence([case], str(root / f"dt={day}"))
        sources = [str(root / f"dt={day}") for day in DAYS]
    table, summary = ingest_table(sources, tmp_path / "out")
    assert not summary.failed and table.num_rows == 2
    identities = identity_frame(table)
    clashing = conflicting_ids([identities.head(1), identities.tail(1)])  # two shards
    assert clashing.to_list() == [identities.get_column("case_id")[0]]
    error = collision_error(identities, clashing.len())
    assert isinstance(error, CaseIdCollision)
    message = str(error)
    assert clashing[0] in message
    uris = identities.get_column("uri").to_list()
    assert uris[0] != uris[1] and uris[0] in message and uris[1] in message
    assert "at line/row" in message
