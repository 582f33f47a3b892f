"""The DuckDB query and the polars snippet in docs/golden-set-format.md run, as written, against
a published version, without using this package to read it."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from golden_distill.datasets.store.publish import publish_version

DOC = Path(__file__).resolve().parents[3] / "docs" / "golden-set-format.md"
DOC_VERSION = "2026.11.29.1"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.fixture
def published(tmp_path, monkeypatch, casegen):
    table = casegen.make_table(40)
    result = publish_version(str(tmp_path / "golden-store"), "nightly", cases=table)
    monkeypatch.chdir(tmp_path)
    return result, table


def test_duckdb_queries_in_the_doc_read_a_version(published):
    result, table = published
    sql = _blocks("sql")[0].replace(DOC_VERSION, result.version)
    statements = [s for s in sql.split(";") if s.strip()]
    con = duckdb.connect()
    con.execute(statements[0])  # the manifest's list of cases files
    statements = statements[1:]
    recovery = con.execute(statements[0]).fetchall()
    expected = result.manifest["counts"]["per_funnel"]["recovery"]
    assert len(recovery) == min(10, expected)
    assert all("recovery" in row[3] for row in recovery)
    calls = con.execute(statements[1]).fetchall()
    assert len(calls) == result.manifest["counts"]["steps"]
    rows = {r["case_id"]: r for r in table.to_pylist()}
    case_id, seq, name, occurrence, args_sha, status, response = calls[0]
    step = rows[case_id]["steps"][seq]
    assert (name, occurrence, args_sha, status, response) == (
        step["name"],
        step["occurrence"],
        step["canonical_args_sha256"],
        step["status"],
        step["response"],
    )


def test_polars_snippet_in_the_doc_reads_and_checks_a_version(published):
    result, table = published
    snippet = next(b for b in _blocks("python") if "import polars" in b)
    scope: dict = {}
    exec(compile(snippet, str(DOC), "exec"), scope)
    assert scope["version"] == result.version
    assert scope["cases"].height == table.num_rows
    assert scope["recovery"].height == result.manifest["counts"]["per_funnel"]["recovery"]
    first = min(table.to_pylist(), key=lambda r: r["case_id"])
    step = first["steps"][0]
    assert scope["recorded"].to_dicts() == [
        {"response": step["response"], "status": step["status"], "error": step["error"]}
    ]


def test_the_recipes_never_read_a_file_the_manifest_does_not_list(published, tmp_path):
    """An extra `cases-0000.parquet` next to the listed `cases.parquet` (the reported 177 rows
    instead of 74): DuckDB reads the listed rows only, the polars snippet refuses."""
    result, _ = published
    version_dir = tmp_path / "golden-store" / "nightly" / "versions" / result.version
    (version_dir / "cases-0000.parquet").write_bytes((version_dir / "cases.parquet").read_bytes())
    sql = _blocks("sql")[0].replace(DOC_VERSION, result.version)
    statements = [s for s in sql.split(";") if s.strip()]
    con = duckdb.connect()
    con.execute(statements[0])
    calls = con.execute(statements[2]).fetchall()
    assert len(calls) == result.manifest["counts"]["steps"]
    snippet = next(b for b in _blocks("python") if "import polars" in b)
    with pytest.raises(AssertionError, match=r"does not list: \['cases-0000.parquet'\]"):
        exec(compile(snippet, str(DOC), "exec"), {})
