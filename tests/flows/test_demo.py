"""`make demo` (flows/demo.py) end to end on a small corpus: publishes, then says why a rerun
changes nothing."""

from __future__ import annotations

import pytest

from golden_distill.flows.demo import main

pytestmark = pytest.mark.slow


def test_demo_publishes_then_reports_the_unchanged_rerun(
    prefect_api, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("GOLDEN_PSEUDONYM_KEY", raising=False)  # the demo makes its own key file
    assert main(["--dir", str(tmp_path), "--sessions", "60"]) == 0
    first = capsys.readouterr().out
    assert "published version: " in first and "report: " in first
    assert main(["--dir", str(tmp_path), "--sessions", "60"]) == 0
    assert "stands (same run key" in capsys.readouterr().out
