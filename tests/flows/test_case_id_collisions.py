"""Where every shard's ids meet (the select step), two different records under one case id stop
the run with both places named; the same record read twice from two partitions does not."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import yaml
from golden_test_data import airline_runs_path
from typer.testing import CliRunner

from golden_distill.flows.cli import app


def _partitions(root: Path, lines: list[bytes]) -> tuple[Path, Path]:
    first, second = root / "dt=2026-11-01" / "runs.jsonl", root / "dt=2026-11-02" / "runs.jsonl"
    for path in (first, second):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"".join(lines))
    return first, second


def _run(tmp_path: Path, source: Path, fmt: str):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"run": {"work_dir": str(tmp_path / "work")}}))
    args = ["run", "--local", "--config", str(config), "--source", str(source), "--format", fmt,
            "--store", str(tmp_path / "store"), "--set", "ids"]  # fmt: skip
    return CliRunner().invoke(app, args)


def _lines(corpus) -> list[bytes]:
    source, _ = corpus
    with (source / "recordings-0000.jsonl").open("rb") as fh:
        lines = [line for line, _ in zip(fh, range(80), strict=False)]
    return [line for line in lines if line.startswith(b'{"recordId"')][:60]


def test_the_same_records_in_two_partitions_publish_once(tmp_path, pseudonym_key, corpus):
    _partitions(tmp_path / "data", _lines(corpus))
    result = _run(tmp_path, tmp_path / "data", "native")
    assert result.exit_code == 0, result.output
    assert "published version: " in result.output


def test_two_different_records_with_one_record_id_stop_the_run(tmp_path, pseudonym_key, corpus):
    lines = _lines(corpus)
    first, second = _partitions(tmp_path / "data", lines)
    record = json.loads(lines[4])
    record["initialUserInput"] = "a different request under the same recordId"
    changed = [*lines[:4], json.dumps(record).encode() + b"\n", *lines[5:]]
    second.write_bytes(b"".join(changed))
    result = _run(tmp_path, tmp_path / "data", "native")
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())  # the console may wrap the message
    assert "golden run failed in stage 'select': case id c_" in output
    assert f"{first} at line/row 5" in output and f"{second} at line/row 5" in output
    assert "different request" not in output  # places and ids, never record text
    assert not (tmp_path / "store" / "ids" / "refs" / "latest").exists()


def test_same_named_chat_partitions_publish_every_run(tmp_path, pseudonym_key):
    """The issue's case: tau-bench runs stored as ``dt=.../runs.json``; each partition's runs
    are cases of their own (before, the second night's ids equalled the first's)."""
    runs = json.loads(airline_runs_path().read_text())
    root = tmp_path / "data"
    for day, part in (("2026-11-01", runs[:20]), ("2026-11-02", runs[20:40])):
        (root / f"dt={day}").mkdir(parents=True)
        (root / f"dt={day}" / "runs.json").write_text(json.dumps(part))
    result = _run(tmp_path, root, "chat")
    assert result.exit_code == 0, result.output
    ids: list[str] = []
    for shard in (tmp_path / "work").glob("**/shards/*/quarantine.jsonl"):  # shard folders
        ids += pl.read_parquet(shard.parent / "decisions.parquet")["case_id"].to_list()
    assert len(ids) == 40 and len(set(ids)) == 40
