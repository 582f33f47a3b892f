"""`golden`: the command line. Each command group lives in its own module and registers here."""

from __future__ import annotations

import importlib

import typer

# Prefect's environment defaults are set once, by golden_distill.flows (flows/prefect_env.py),
# which Python imports before this package; tldextract is kept offline by golden_distill.redaction.

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
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(app)


_register_all()


def main() -> None:
    app()
