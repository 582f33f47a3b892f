"""No empty or wrong-format publish: `golden run` and `golden ingest` with the wrong `--format`
on the vendored tau-bench runs, an empty input and a run that selects nothing all exit
non-zero, publish nothing (no version, no alias move) and keep the quarantine bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from golden_test_data import airline_runs_path
from typer.testing import CliRunner

from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.flows.cli import app

HINT = "did you mean --format chat?"


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"run": {"work_dir": str(tmp_path / "work")}}))
    return config


def _run(tmp_path: Path, source: Path, *extra: str, local: bool = True):
    args = ["run", "--config", str(_config(tmp_path)), "--source", str(source),
            "--store", str(tmp_path / "store"), "--set", "tau", *extra]  # fmt: skip
    return CliRunner().invoke(app, [*args, "--local"] if local else args)


def _versions(tmp_path: Path) -> list[str]:
    folder = tmp_path / "store" / "tau" / "versions"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def _latest(tmp_path: Path) -> str | None:
    ref = tmp_path / "store" / "tau" / "refs" / "latest"
    return ref.read_text().strip() if ref.exists() else None


def _quarantine_bytes(tmp_path: Path) -> int:
    return sum(p.stat().st_size for p in (tmp_path / "work").rglob("quarantine*.jsonl"))


def test_run_with_the_wrong_format_fails_with_a_hint_and_publishes_nothing(
    tmp_path, pseudonym_key
) -> None:
    source = airline_runs_path()
    result = _run(tmp_path, source, "--format", "native")
    assert result.exit_code == 1, result.output
    assert "stopped reading after 1,000 records in a row" in result.output
    assert HINT in result.output
    assert _versions(tmp_path) == [] and _latest(tmp_path) is None
    # the quarantine holds the 1,000 records read before the stop, far less than the input
    assert 0 < _quarantine_bytes(tmp_path) < source.stat().st_size / 4


def test_a_wrong_format_never_moves_latest(tmp_path, pseudonym_key) -> None:
    runs = json.loads(airline_runs_path().read_text())[:12]
    source = tmp_path / "in" / "runs.json"
    source.parent.mkdir()
    source.write_text(json.dumps(runs))
    first = _run(tmp_path, source, "--format", "chat")
    assert first.exit_code == 0, first.output
    before = (_versions(tmp_path), _latest(tmp_path))
    assert before[1] is not None
    # fewer lines than the stop: every one quarantined, the run still fails on it
    wrong = _run(tmp_path, source, "--format", "native", "--force")
    assert wrong.exit_code == 1, wrong.output
    assert "no case read: every one of the" in wrong.output and HINT in wrong.output
    assert (_versions(tmp_path), _latest(tmp_path)) == before
    # a reader that finds no record of its kind at all
    wrong = _run(tmp_path, source, "--format", "otel", "--force")
    assert wrong.exit_code == 1, wrong.output
    assert "no case read: no records in the input" in wrong.output and HINT in wrong.output
    assert (_versions(tmp_path), _latest(tmp_path)) == before


def test_empty_inputs_fail_and_publish_nothing(tmp_path, pseudonym_key) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    result = _run(tmp_path, folder)
    assert result.exit_code == 1 and "holds no recording files" in result.output
    empty = folder / "runs.jsonl"
    empty.write_bytes(b"")
    result = _run(tmp_path, empty, "--format", "native")
    assert result.exit_code == 1, result.output
    assert "no records in the input" in result.output
    assert _versions(tmp_path) == [] and _latest(tmp_path) is None


def test_a_run_that_selects_nothing_fails_and_publishes_nothing(tmp_path, pseudonym_key) -> None:
    """The tau-bench runs carry no timestamps: a window selects none of them."""
    result = _run(
        tmp_path, airline_runs_path(), "--format", "chat",
        "--since", "2026-11-01", "--until", "2026-11-02",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "golden run failed in stage 'select': nothing selected" in result.output
    assert "200 case(s) read, 0 in the window" in result.output
    assert _versions(tmp_path) == [] and _latest(tmp_path) is None


@pytest.mark.slow
def test_the_prefect_flow_refuses_the_wrong_format_too(
    prefect_api, tmp_path, pseudonym_key
) -> None:
    result = _run(tmp_path, airline_runs_path(), "--format", "native", local=False)
    assert result.exit_code == 1, result.output
    assert HINT in result.output
    assert _versions(tmp_path) == [] and _latest(tmp_path) is None


def test_ingest_with_the_wrong_format_exits_1_with_a_hint_and_a_bounded_quarantine(
    tmp_path,
) -> None:
    source = airline_runs_path()
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["ingest", str(source), "--out", str(out), "-f", "native"])
    assert result.exit_code == 1, result.output
    assert HINT in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases_written"] == 0
    assert summary["records_read"] == summary["quarantined_total"] == 1000
    assert len(read_quarantine(out / "quarantine.jsonl")) == 1000
    assert (out / "quarantine.jsonl").stat().st_size < source.stat().st_size / 4


def test_ingest_of_nothing_but_quarantine_or_empty_files_exits_1(tmp_path) -> None:
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps(json.loads(airline_runs_path().read_text())[:3]))
    for fmt, why in (("native", "every one of the 1 records"), ("otel", "no records in the")):
        out = str(tmp_path / fmt)
        result = CliRunner().invoke(app, ["ingest", str(runs), "--out", out, "-f", fmt])
        assert result.exit_code == 1, result.output
        assert f"no case read: {why}" in result.output and HINT in result.output
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "x.jsonl").write_bytes(b"")
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "e"), "--out", str(tmp_path / "b")])
    assert result.exit_code == 1 and "no records in the input" in result.output


def test_a_run_whose_every_case_was_rejected_in_review_publishes_nothing(
    tmp_path, pseudonym_key
) -> None:
    """Selected, then all rejected by a reviewer: no case is left, so no version either."""
    import csv

    runs = json.loads(airline_runs_path().read_text())[:12]
    source = tmp_path / "in" / "runs.json"
    source.parent.mkdir()
    source.write_text(json.dumps(runs))
    first = _run(tmp_path, source, "--format", "chat")
    assert first.exit_code == 0, first.output
    before = (_versions(tmp_path), _latest(tmp_path))
    sheet, store = tmp_path / "sheet.csv", str(tmp_path / "store")
    runner = CliRunner()
    out = runner.invoke(app, ["review", "export", "tau@latest", "--store", store,
                              "--out", str(sheet), "--all"])  # fmt: skip
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(sheet.open()))
    assert rows
    for row in rows:
        row.update(decision="reject", reason="not a useful case", reviewer="test")
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    imported = runner.invoke(app, ["review", "import", str(sheet), "--store", store,
                                   "--set", "tau"])  # fmt: skip
    assert imported.exit_code == 0, imported.output
    again = _run(tmp_path, source, "--format", "chat", "--force", "--rebuild")
    assert again.exit_code == 1, again.output
    assert "no case left to publish" in again.output
    assert (_versions(tmp_path), _latest(tmp_path)) == before
