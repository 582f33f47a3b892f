"""Prefect defaults that break on a fresh 2-core machine, set by the project so users never have to.

Prefect reads its settings from the environment when it is first imported, so these are applied
from ``golden_distill.flows.__init__`` (before any flow module imports Prefect). Each is only a
default: a value the user exported wins.

* the ephemeral API server gets 180 s to start (Prefect's 20 s is too short for a first run on a
  loaded 2-core machine: it migrates a fresh SQLite database);
* telemetry and analytics are off (no network calls from a batch job);
* the embedded server's logs are quiet (warnings only): a run shows the pipeline, not uvicorn.
"""

from __future__ import annotations

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
