"""The coverage gap (filters/coverage.py): this run's traffic with no case in the version, by
tool path and by task; unknown tool names never shown."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.coverage import coverage_gap, task_of_work_key
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.signature import coverage_keys, signatures


def _case(case_id: str, tools: list[tuple[str, bool]], trace: str) -> dict:
    steps = [
        {"seq": i, "kind": "tool", "name": name, "status": "ok", "is_mutating": write,
         "arguments": "{}", "system": None}
        for i, (name, write) in enumerate(tools)
    ]  # fmt: skip
    return {
        "case_id": case_id,
        "trace_id": trace,
        "tenant_id": "t1",
        "user_input": "hello",
        "intent": {"name": None, "confidence": None},
        "steps": steps,
        "outcome": {"final_state": "DONE", "status": "ok", "reward": 1.0, "handoff": False},
        "source": {"source_record_id": trace},
    }


def _frame() -> pl.DataFrame:
    return pl.DataFrame(
        [
            _case("c1", [("get_order", False), ("cancel_order", True)], "task=1/trial=0"),
            _case("c2", [("get_order", False), ("cancel_order", True)], "task=1/trial=1"),
            _case("c3", [("get_order", False), ("refund", True)], "task=2/trial=0"),
            _case("c4", [("lookup_jane.doe@example.com", False)], "task=3/trial=0"),
        ]
    )


def test_coverage_keys_equal_the_signatures() -> None:
    frame, cfg = _frame(), DedupConfig()
    keys = coverage_keys(frame, cfg)
    sigs = signatures(frame, cfg).with_columns(task_key=task_of_work_key(pl.col("work_key")))
    assert keys["path_key"].to_list() == sigs["path_key"].to_list()
    assert keys["task_key"].to_list() == sigs["task_key"].to_list()
    assert keys["task_key"][0] == keys["task_key"][1] != keys["task_key"][2]


def test_gap_by_path_and_task_and_unknown_tools_hidden() -> None:
    frame, cfg = _frame(), DedupConfig()
    sigs = signatures(frame, cfg).with_columns(task_key=task_of_work_key(pl.col("work_key")))
    traffic = sigs.select("case_id", "path_key", "trajectory", "task_key")
    covered = coverage_keys(frame.filter(pl.col("case_id") == "c1"), cfg)
    gap = coverage_gap(traffic, covered, known_tools={"refund"})
    assert gap["candidates"] == 4
    assert gap["tool_paths"]["uncovered_cases"] == 2  # c3, c4 (c2 shares c1's path)
    assert gap["tasks"]["uncovered_cases"] == 2 and gap["tasks"]["uncovered"] == 2
    shown = {t["shown"] for t in gap["tool_paths"]["top"]}
    assert "get_order:ok:R refund:ok:W" in shown  # every tool known: shown as is
    assert not any("example.com" in s for s in shown)  # an unverified tool name: its hash
    assert all(t["shown"].startswith("task ") for t in gap["tasks"]["top"])
    assert gap["uncovered_paths"] == 2 and len(gap["paths"]) == 2
