"""`golden generate`: writes a corpus and prints its summary; bad options exit non-zero cleanly."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from golden_distill.flows.cli import app
from golden_distill.synthetic import load_truth


def test_generate_command_writes_corpus_and_summary(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    result = CliRunner().invoke(
        app,
        [
            "generate",
            "--out",
            str(out),
            "--sessions",
            "40",
            "--seed",
            "3",
            "--compress",
            "gz",
            "--oversized-bytes",
            "20000",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "valid records" in result.output and "broken truncated_stream" in result.output
    truth = load_truth(out)
    assert (out / "recordings-0000.jsonl.gz").exists()
    assert f"{truth.valid_records:,}" in result.output


def test_generate_rejects_bad_limit_without_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["generate", "--out", str(tmp_path), "--sessions", "5", "--oversized-bytes", "10"]
    )
    assert result.exit_code == 2
    assert "oversized_limit" in result.output and "Traceback" not in result.output
