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
    "erase",
    "work",
    "alerts",
    "fields",
    "replay",
    "review",
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(app)


_register_all()


#: Top-level modules of the `pipeline` extra (pyproject.toml). The base install reads golden sets
#: (`golden sets ...`, the reader); a command that needs one of these says how to install it.
PIPELINE_ONLY_MODULES = frozenset(
    {
        "prefect",
        "prefect_dask",
        "presidio_analyzer",
        "presidio_anonymizer",
        "polars",
        "sklearn",
        "faker",
        "psycopg",
        "psutil",
        "ahocorasick",
        "msgspec",
        "numpy",
        "detect_secrets",
        "english_words",
        "stdnum",
        "starlette",
        "uvicorn",
    }
)


def main() -> None:
    try:
        app()
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in PIPELINE_ONLY_MODULES:
            raise
        typer.echo(
            f"golden: this command needs the pipeline install ({missing} is missing): "
            "pip install 'golden-distill[pipeline]'",
            err=True,
        )
        raise SystemExit(1) from None
