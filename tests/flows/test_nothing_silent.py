"""`golden run` says on the console when a run changes nothing, and why (issue 14, point 10)."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow


def test_an_unchanged_run_says_the_latest_version_stands_and_why(
    prefect_api, pseudonym_key, corpus, tmp_path
):
    source, truth = corpus
    config = tmp_path / "config.yaml"

    def run(band: float) -> str:
        config.write_text(
            yaml.safe_dump(
                {
                    "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]}},
                    "dedup": {"borderline_band": band},
                    "run": {"work_dir": str(tmp_path / "work")},
                }
            )
        )
        args = ["run", "--config", str(config), "--source", str(source), "--format", "native",
                "--store", str(tmp_path / "store"), "--set", "quiet"]  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        return result.output

    first = run(0.05)
    version = first.split("published version: ")[1].split()[0]
    assert "quarantined while reading: " in first  # the corpus plants broken lines
    # nothing at all changed: answered before the flow starts, by the run key
    second = run(0.05)
    assert f"the latest version {version} stands (same run key" in second
    # a setting that only changes what the report lists: same cases, same content hash
    third = run(0.1)
    assert f"the latest version {version} stands (same content hash" in third
