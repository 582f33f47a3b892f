"""Library log lines a successful run does not need (flows/prefect_env.py); the end-to-end check
of a deployment run's output is in test_nightly_deployment.py."""

from __future__ import annotations

import logging
import os

import golden_distill.flows  # noqa: F401  (installs the filter, as every flow process does)
from golden_distill.flows.prefect_env import quiet_library_logs


def _record(level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord("prefect.task_runs", level, __file__, 1, message, (), None)


def _passes(record: logging.LogRecord) -> bool:
    return logging.getLogger("prefect.task_runs").filter(record)


def test_memory_hook_lines_are_dropped_and_everything_else_kept():
    quiet_library_logs()
    quiet_library_logs()  # idempotent: one filter
    hooks = "Running hook 'release_after_task' in response to entering state 'Completed'"
    assert not _passes(_record(logging.INFO, hooks))
    assert not _passes(_record(logging.INFO, "Hook 'trim_after_helped_task' finished running"))
    assert _passes(_record(logging.INFO, "Running hook 'notify' in response to entering state"))
    assert _passes(_record(logging.ERROR, "An error was encountered while running hook "
                           "'release_after_task'"))  # fmt: skip
    assert _passes(_record(logging.INFO, "Finished in state Completed()"))


def test_distributed_logs_warnings_only_unless_asked_otherwise():
    assert os.environ["DASK_LOGGING__DISTRIBUTED"] == "warning"
    assert logging.getLogger("distributed").getEffectiveLevel() == logging.WARNING
