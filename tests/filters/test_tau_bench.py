"""On real tau-bench runs (read by the real chat adapter): hand-off and recovery, checked against
sets computed here straight from the raw JSON."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from golden_test_data import all_runs_paths

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import score_cases

FILES = all_runs_paths()


def _calls(run: dict) -> list[tuple[str, bool]]:
    """(tool name, reply is an error) per tool call, in call order. Call ids repeat within a run
    in these files, so a reply answers the oldest unanswered call with its id."""
    calls: list[list] = []
    waiting: dict[str, list[list]] = {}
    for message in run["traj"]:
        for call in message.get("tool_calls") or []:
            entry = [call["function"]["name"], False]
            calls.append(entry)
            waiting.setdefault(call["id"], []).append(entry)
        if message.get("role") == "tool" and waiting.get(message.get("tool_call_id")):
            entry = waiting[message["tool_call_id"]].pop(0)
            entry[1] = str(message.get("content") or "").startswith("Error:")
    return [(name, err) for name, err in calls]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from golden_distill.datasets.ingest import ingest

    out = tmp_path_factory.mktemp("tau")
    ingest([str(f) for f in FILES], out, fmt="chat")
    cases = pl.read_parquet(out / "cases")
    raw = {str(f): json.loads(f.read_text()) for f in FILES}
    scored = score_cases(cases, FunnelsConfig()).join(
        cases.select(
            "case_id",
            uri=pl.col("source").struct.field("uri"),
            position=pl.col("source").struct.field("position"),
        ),
        on="case_id",
    )
    rows = []
    for row in scored.iter_rows(named=True):
        file = next(k for k in raw if row["uri"].endswith(Path(k).name))
        rows.append((row, raw[file][row["position"] - 1]))
    assert len(rows) > 300  # most of the 400 runs are readable
    return rows


def test_handoff_is_exactly_the_runs_that_transferred(runs):
    for row, run in runs:
        transferred = any(name == "transfer_to_human_agents" for name, _ in _calls(run))
        assert row["in_human_handoff"] == transferred, row["case_id"]
    assert sum(row["in_human_handoff"] for row, _ in runs) > 20


def _recovers(run: dict, window: int = 3) -> bool:
    calls = _calls(run)
    return any(
        err and any(n == name and not e for n, e in calls[i + 1 : i + 1 + window])
        for i, (name, err) in enumerate(calls)
    )


def test_recovery_needs_an_error_a_later_success_and_a_good_end(runs):
    selected = 0
    for row, run in runs:
        calls = _calls(run)
        if not any(err for _, err in calls):
            assert not row["in_recovery"], row["case_id"]
            continue
        expected = _recovers(run) and run["reward"] > 0
        assert row["in_recovery"] == expected, row["case_id"]
        selected += expected
    assert selected >= 5
