"""Every command that reads a config exits 2 on a config error, with one clean line naming the
file and the key (no traceback); `golden preview` of a folder with no case too."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from golden_distill.flows.cli import app

PROBLEM = "funnels.bogus_key: unknown key"


def _commands(tmp: Path, bad: Path) -> dict[str, list[str]]:
    store, src = str(tmp / "store"), str(tmp / "src")
    common = ["--config", str(bad), "--store", store]
    sheet = tmp / "sheet.csv"
    return {
        "run": ["run", "--config", str(bad), "--source", src, "--store", store, "--set", "x"],
        "preview": ["preview", "--config", str(bad), src],
        "preview --against": ["preview", "--against", str(bad), src],
        "config validate": ["config", "validate", str(bad)],
        "ingest": ["ingest", "--config", str(bad), src, "--out", str(tmp / "out")],
        "redact": ["redact", "--config", str(bad), src, "--out", str(tmp / "r.parquet")],
        "sets list": ["sets", "list", *common],
        "sets show": ["sets", "show", "x@latest", *common],
        "sets why": ["sets", "why", "c_1", *common],
        "sets diff": ["sets", "diff", "x@latest", "x@stable", *common],
        "sets verify": ["sets", "verify", "x@latest", *common],
        "sets promote": ["sets", "promote", "x@latest", "stable", *common],
        "sets gc": ["sets", "gc", "x", *common],
        "erase": ["erase", "--set", "x", "--subject", "user_id=u1", *common],
        "work prune": ["work", "prune", "--config", str(bad)],
        "review export": ["review", "export", "x@latest", "--out", str(tmp / "s.csv"), *common],
        "review import": ["review", "import", str(sheet), "--set", "x", *common],
    }


@pytest.fixture
def bad_config(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    bad = tmp_path / "bad.yaml"
    bad.write_text("funnels:\n  bogus_key: 1\n")
    return bad


@pytest.mark.parametrize("name", list(_commands(Path("/t"), Path("/b"))))
def test_config_error_exits_2_with_a_clean_message(name, tmp_path, bad_config) -> None:
    (tmp_path / "sheet.csv").write_text("case_id,decision,reason,reviewer\n")
    args = _commands(tmp_path, bad_config)[name]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (name, result.exit_code, result.output)
    assert PROBLEM in result.output, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_replay_gate_config_error_exits_2(tmp_path) -> None:
    gate = tmp_path / "gate.yaml"
    gate.write_text("gate:\n  bogus: 1\n")
    result = CliRunner().invoke(
        app,
        ["replay", "x@latest", "--agent", "m:f", "--out", str(tmp_path / "o"), "--gate",
         str(gate), "--store", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 2 and "gate.bogus: unknown key" in result.output


def test_preview_of_a_folder_without_cases(tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(app, ["preview", str(empty)])
    assert result.exit_code == 2, result.output
    assert "nothing to preview: no case was read" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("text", ["automations: [1\n", "automations:\n  - bogus: 1\n", "- 1\n"])
def test_alerts_file_error_exits_2_before_anything_is_saved(text, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GOLDEN_ALERT_WEBHOOK_URL", "http://127.0.0.1:9/hook")
    bad = tmp_path / "alerts.yaml"
    bad.write_text(text)
    result = CliRunner().invoke(app, ["alerts", "apply", "--file", str(bad)])
    assert result.exit_code == 2, result.output
    assert f"golden alerts apply: {bad}" in result.output and "Traceback" not in result.output
