"""`golden work prune --older-than 7d` removes old work units (raw data) and keeps recent ones."""

from __future__ import annotations

import os
import time
from pathlib import Path

from typer.testing import CliRunner

from golden_distill.flows.cli import app
from golden_distill.flows.work_retention import parse_duration

DAY = 86400.0


def _touch(path: Path, age_days: float, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = time.time() - age_days * DAY
    os.utime(path, (stamp, stamp))


def test_prune_removes_old_shards_quarantine_results_and_logs(tmp_path):
    work = tmp_path / "work"
    _touch(work / "shards" / "old" / "quarantine.jsonl", 10, "raw line with jane@example.com")
    _touch(work / "shards" / "old" / "candidates.parquet", 9)
    _touch(work / "shards" / "mixed" / "quarantine.jsonl", 10)
    _touch(work / "shards" / "mixed" / "candidates.parquet", 1)  # recent: the unit stays whole
    _touch(work / "prefect-results" / ("a" * 64), 8)
    _touch(work / "prefect-results" / ("b" * 64), 2)
    _touch(work / "errors.log", 30)
    _touch(work / "fingerprints.json", 30)
    runner = CliRunner()

    dry = runner.invoke(app, ["work", "prune", "--older-than", "7d", "--work-dir", str(work),
                              "--dry-run"])  # fmt: skip
    assert dry.exit_code == 0 and "would remove 3 item(s)" in dry.output
    assert (work / "shards" / "old").exists()

    done = runner.invoke(app, ["work", "prune", "--older-than", "7d", "--work-dir", str(work)])
    assert done.exit_code == 0, done.output
    left = sorted(str(p.relative_to(work)) for p in work.rglob("*") if p.is_file())
    assert left == [
        "fingerprints.json",
        "prefect-results/" + "b" * 64,
        "shards/mixed/candidates.parquet",
        "shards/mixed/quarantine.jsonl",
    ]
    bad = runner.invoke(app, ["work", "prune", "--older-than", "7 days", "--work-dir", str(work)])
    assert bad.exit_code == 2 and "not a duration" in bad.output


def test_durations():
    assert parse_duration("36h").total_seconds() == 36 * 3600
    assert parse_duration("2w").days == 14


def test_each_set_has_its_own_work_folder_and_prune_reaches_it(tmp_path):
    """Two sets configured with one work folder get one folder each (a run prunes only its
    own), and `golden work prune` reaches inside every set's folder."""
    from golden_distill.flows.params import DistillParams

    config = tmp_path / "c.yaml"
    config.write_text(f"run:\n  sources: [x]\n  work_dir: {tmp_path / 'work'}\n")
    a = DistillParams(config_path=str(config), set_name="a").resolve()
    b = DistillParams(config_path=str(config), set_name="b").resolve()
    assert a.work_dir == tmp_path / "work" / "sets" / "a"
    assert b.work_dir == tmp_path / "work" / "sets" / "b"
    assert a.config.run.results_dir() != b.config.run.results_dir()

    work = tmp_path / "work"
    _touch(work / "sets" / "a" / "shards" / "old" / "candidates.parquet", 10)
    _touch(work / "sets" / "b" / "shards" / "new" / "candidates.parquet", 1)
    done = CliRunner().invoke(app, ["work", "prune", "--older-than", "7d", "--work-dir", str(work)])
    assert done.exit_code == 0, done.output
    assert not (work / "sets" / "a" / "shards" / "old").exists()
    assert (work / "sets" / "b" / "shards" / "new" / "candidates.parquet").exists()
