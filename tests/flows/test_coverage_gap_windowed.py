"""The coverage gap on every run, windowed or not: a scheduled (windowed) run's new traffic
with no case in the set is in its report and its manifest, the first window's and the grown
set's alike."""

from __future__ import annotations

import re

import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow


def test_windowed_runs_report_their_coverage_gap(corpus, tmp_path, monkeypatch) -> None:
    from golden_distill.datasets.reader import open_set

    source, _ = corpus
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "funnels": {"quotas": {"max_cases": 12}},  # far fewer cases than tool paths
        "run": {"work_dir": str(tmp_path / "work")},
    }))  # fmt: skip
    store = tmp_path / "store"
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", "coverage-gap-test-key-0123456789abcdef0123")
    base = ["run", "--local", "--config", str(config), "--source", str(source), "--format",
            "native", "--store", str(store), "--set", "gap"]  # fmt: skip
    versions = []
    for since, until in (("2026-11-20", "2026-11-24"), ("2026-11-24", "2026-11-29")):
        result = CliRunner().invoke(app, [*base, "--since", since, "--until", until])
        assert result.exit_code == 0, result.output
        versions.append(re.search(r"published version: (\S+)", result.output).group(1))
    grown = open_set(str(store), f"gap@{versions[1]}").manifest
    assert grown["lineage"]["parent_version"] == versions[0]  # the scheduled path: grown
    for version in versions:
        golden = open_set(str(store), f"gap@{version}")
        stats = golden.manifest["stats"]
        gap = stats["coverage_gap"]
        assert gap["candidates"] > 0
        paths, tasks = gap["tool_paths"], gap["tasks"]
        assert 0 < paths["uncovered_cases"] <= gap["candidates"]
        assert paths["uncovered"] >= 1 and paths["top"]
        assert tasks["uncovered_cases"] <= gap["candidates"]
        html = (golden.report_html() or b"").decode()
        assert "Coverage gap: this run&#x27;s traffic with no case in the set" in html
        assert f"tool paths: {paths['uncovered_cases']:,} case(s) on" in html
