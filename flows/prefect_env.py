"""Prefect defaults that break on a fresh 2-core machine, set by the project so users never have to.

Prefect reads its settings from the environment when it is first imported, so these are applied
from ``golden_distill.flows.__init__`` (before any flow module imports Prefect). Each is only a
default: a value the user exported wins.

* the ephemeral API server gets 180 s to start (Prefect's 20 s is too short for a first run on a
  loaded 2-core machine: it migrates a fresh SQLite database);
* telemetry and analytics are off (no network calls from a batch job);
* the embedded server's logs are quiet (warnings only): a run shows the pipeline, not uvicorn.

``quiet_library_logs`` keeps a successful run's log to the pipeline's own lines: Dask's
``distributed`` logs warnings only (its INFO lines, about 70 a run, include tracebacks of
connections closed on purpose at shutdown; ``DASK_LOGGING__DISTRIBUTED`` is inherited by the
workers a private cluster spawns), and Prefect's two INFO lines around each run of the
project's memory hooks (flows/memory.py; two per task) are dropped; a failing hook is still
logged.
"""

from __future__ import annotations

import logging
import os

PREFECT_DEFAULTS: dict[str, str] = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_LOGGING_SERVER_LEVEL": "WARNING",
}


def apply_prefect_defaults() -> None:
    """Set every project default that the environment does not already set."""
    for name, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(name, value)


#: The project's task hooks whose "Running hook ..." / "Hook ... finished" lines are dropped.
QUIET_HOOKS = ("release_after_task", "trim_after_helped_task")


class _QuietHooks(logging.Filter):
    """Drops Prefect's INFO lines around a successful run of one of ``QUIET_HOOKS``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.INFO:
            return True
        message = str(record.msg)
        if not (message.startswith("Running hook '") or message.startswith("Hook '")):
            return True
        return not any(f"'{name}'" in message for name in QUIET_HOOKS)


def quiet_library_logs() -> None:
    """Library log lines a successful run does not need (see the module docstring); an
    explicit ``DASK_LOGGING__DISTRIBUTED`` wins."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
    if os.environ["DASK_LOGGING__DISTRIBUTED"].lower() == "warning":
        logging.getLogger("distributed").setLevel(logging.WARNING)
    task_runs = logging.getLogger("prefect.task_runs")
    if not any(isinstance(f, _QuietHooks) for f in task_runs.filters):
        task_runs.addFilter(_QuietHooks())
