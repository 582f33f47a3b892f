"""`golden`: the command line. Each command group lives in its own module and registers here."""

from __future__ import annotations

import importlib
import os

import typer

# Prefect defaults that break on a fresh 2-core machine are set by the project, not the user.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
os.environ.setdefault("PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_SERVER_LEVEL", "WARNING")
# Presidio's e-mail recognizer must never reach for the network (tldextract's suffix list).
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

app = typer.Typer(
    name="golden",
    help=(
        "Distil nightly AI-agent recordings into small, privacy-safe, versioned golden sets.\n\n"
        "Typical flow: `golden generate` (sample data) -> `golden ingest` (canonical shards) -> "
        "`golden preview` (tune funnels) -> `golden run` (the nightly job: funnels, quotas, dedup, "
        "redaction, publish) -> `golden sets ...` (inspect, verify, promote published versions)."
    ),
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_show_locals=False,  # locals may hold record text: never print them
)

#: Modules under golden_distill.flows.cli that define commands. Each exposes `register(app)`.
COMMAND_MODULES: tuple[str, ...] = (
    "run",
    "sets",
    "config_cmd",
    "preview",
    "ingest",
    "generate",
    "redact",
    "erase",
    "work",
    "alerts",
    "review",
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(app)


_register_all()


def main() -> None:
    app()
