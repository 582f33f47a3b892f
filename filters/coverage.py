"""The coverage gap: this run's traffic with no case in the set it publishes.

A run reads new traffic; the version it publishes holds one case per cluster, within the
quotas. Traffic whose tool path, or whose task (the intent name, else the task id the source
gives, else the expected outcome: the task part of dedup's work key), has no case at all in
the version is a gap a replay will never exercise. Counted on every run, windowed or not, for
the report and the manifest.

Privacy: uncovered traffic was never redacted, so its tool names and tasks are not known to be
clean. A tool path is shown by its trajectory (tool names, statuses, write flags) only when
every tool in it is a known name (published in the version, or in the configured tool
catalogues); otherwise, and for tasks always, by its short hash. Pure functions, no I/O.
"""

from __future__ import annotations

from typing import Any

import polars as pl

#: Uncovered paths and tasks listed (most cases first); the counts cover all.
TOP = 10


def _dimension(
    traffic: pl.DataFrame, covered: set[str], key: str, label: pl.Expr, top: int
) -> dict[str, Any]:
    gap = traffic.filter(~pl.col(key).is_in(sorted(covered)))
    grouped = (
        gap.with_columns(_label=label)
        .group_by(key)
        .agg(pl.len().alias("cases"), pl.col("_label").first())
        .sort(["cases", key], descending=[True, False])
    )
    return {
        "uncovered_cases": gap.height,
        "uncovered": grouped.height,
        "top": [
            {"key": k, "shown": s, "cases": int(n)}
            for k, n, s in grouped.head(top).select(key, "cases", "_label").iter_rows()
        ],
    }


def coverage_gap(
    traffic: pl.DataFrame,
    covered: pl.DataFrame,
    known_tools: set[str],
    top: int = TOP,
) -> dict[str, Any]:
    """``traffic``: this run's candidates (case_id, path_key, trajectory, task_key);
    ``covered``: the version's cases (path_key, task_key, tools). Per dimension the cases and
    distinct paths/tasks without a case in the version, and the largest of them."""
    paths = set(covered.get_column("path_key").to_list()) if covered.height else set()
    tasks = set(covered.get_column("task_key").to_list()) if covered.height else set()
    known = sorted(known_tools | _tools(covered))
    trajectory = pl.col("trajectory").fill_null("")
    tokens = trajectory.str.split(" ").list.eval(pl.element().str.split(":").list.first())
    safe = tokens.list.eval(pl.element().is_in(known) | (pl.element() == "")).list.all()
    path_label = (
        pl.when(safe)
        .then(trajectory)
        .otherwise(pl.format("(a path with a tool not in the set) {}", pl.col("path_key")))
    )
    by_path = _dimension(traffic, paths, "path_key", path_label, top)
    by_task = _dimension(traffic, tasks, "task_key", pl.format("task {}", "task_key"), top)
    return {
        "candidates": traffic.height,
        "tool_paths": by_path,
        "tasks": by_task,
        # the tool-path figures under their earlier names (report, manifest readers)
        "uncovered_cases": by_path["uncovered_cases"],
        "uncovered_paths": by_path["uncovered"],
        "paths": [{"trajectory": p["shown"], "cases": p["cases"]} for p in by_path["top"]],
    }


def _tools(covered: pl.DataFrame) -> set[str]:
    if not covered.height or "tools" not in covered.columns:
        return set()
    return set(covered.get_column("tools").explode().drop_nulls().to_list())


def task_of_work_key(work_key: pl.Expr) -> pl.Expr:
    """The task part of a signature's ``work_key`` (``<task>.<outcome>.<tenant>``)."""
    return work_key.str.split(".").list.first()
