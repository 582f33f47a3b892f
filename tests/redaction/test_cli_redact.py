"""`golden redact`: shards in, redacted shards + quarantine + summary out, counts printed."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.datasets.shards import ShardWriter
from golden_distill.flows.cli import app
from golden_distill.redaction.keys import ENV_VAR

EMAIL = "mallory.q@example.net"


@pytest.fixture()
def shards(tmp_path: Path, make_case, make_step) -> Path:
    src = tmp_path / "ingest"
    with ShardWriter(src / "cases", rows_per_shard=2, batch_rows=2) as writer:
        for i in range(4):
            writer.write(
                make_case(
                    case_id=f"c{i}",
                    user_input=f"write to {EMAIL} about ORD-10{i}234",
                    steps=[
                        make_step(
                            0,
                            "crm_get_customer",
                            {"customerId": f"C{i}"},
                            {"email": EMAIL, "status": "ACTIVE"},
                        )
                    ],
                )
            )
    return src


def test_redact_writes_shards_summary_and_prints_counts(
    shards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    out = tmp_path / "out"
    key_file = tmp_path / "demo" / "key"
    result = CliRunner().invoke(
        app,
        ["redact", str(shards), "--out", str(out), "--key-file", str(key_file), "--workers", "2"],
    )
    assert result.exit_code == 0, result.output
    assert "created a local demo pseudonym key" in result.output
    assert "EMAIL_ADDRESS" in result.output and EMAIL not in result.output
    files = sorted((out / "cases").glob("*.parquet"))
    assert [f.name for f in files] == ["part-00000.parquet", "part-00001.parquet"]
    table = pq.read_table(files[0])
    assert table.schema.names == GOLDEN_SCHEMA.names and table.num_rows == 2
    assert EMAIL.encode() not in b"".join(f.read_bytes() for f in files)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases_in"] == summary["cases_out"] == 4
    assert summary["entity_counts"]["EMAIL_ADDRESS"] >= 8
    assert summary["key_id"].startswith("k_")
    assert read_quarantine(out / "quarantine.jsonl") == []


def test_opted_out_tenant_is_quarantined_with_reason(
    shards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, "cli-test-key-Hn3Jm7Kq1Lw5Zx9Cv2Bn6Mr4Tp8Ys0Ua")
    config = tmp_path / "cfg.yaml"
    config.write_text("funnels:\n  redacted:\n    opt_out_tenants: [t-acme]\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["redact", str(shards), "--out", str(out), "--config", str(config)]
    )
    assert result.exit_code == 0, result.output
    entries = read_quarantine(out / "quarantine.jsonl")
    assert {e["reason"] for e in entries} == {"tenant_opted_out"} and len(entries) == 4
    assert all("raw" not in e for e in entries)


def test_missing_key_is_a_clear_error(
    shards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    result = CliRunner().invoke(app, ["redact", str(shards), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert ENV_VAR in result.output


def test_an_unreadable_shard_is_named_and_fails_the_command(
    shards: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, "cli-test-key-Hn3Jm7Kq1Lw5Zx9Cv2Bn6Mr4Tp8Ys0Ua")
    (shards / "cases" / "part-00009.parquet").write_bytes(b"not parquet at all")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["redact", str(shards), "--out", str(out)])
    assert result.exit_code == 1
    assert "part-00009.parquet: cannot redact" in result.output
    assert len(list((out / "cases").glob("*.parquet"))) == 2  # the good shards are written
    assert json.loads((out / "summary.json").read_text())["failed_shards"] == 1
