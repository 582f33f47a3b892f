"""`golden config validate FILE` and `golden config schema`: check a pipeline config, or print
its JSON Schema for editor completion (e.g. yaml-language-server's `# yaml-language-server:
$schema=...`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from golden_distill.datasets.config_model import ConfigError

VALIDATE_HELP = """Check a pipeline config file: every section, every key, every value.

Unknown keys and bad values are reported with the file, the dotted key path and, for a typo, the
nearest valid key. Exit code 0 when valid, 1 otherwise.

Example:

    golden config validate configs/nightly.yaml
"""

SCHEMA_HELP = """Print the JSON Schema of the pipeline config (all sections, with descriptions).

Point your editor at it for completion and inline docs, e.g.:

    golden config schema > golden-config.schema.json
"""


def validate_command(
    file: Annotated[Path, typer.Argument(help="The YAML config file to check.")],
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config

    try:
        load_pipeline_config(file)
    except ConfigError as exc:
        for problem in exc.problems:
            typer.echo(f"{exc.source}: {problem}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"{file}: valid")


def schema_command(
    indent: Annotated[int, typer.Option(help="JSON indentation.")] = 2,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import PipelineConfig

    schema = PipelineConfig.model_json_schema()
    schema.setdefault("title", "golden-distill pipeline config")
    typer.echo(json.dumps(schema, indent=indent, sort_keys=False))


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Check pipeline config files and print their JSON Schema.", no_args_is_help=True
    )
    group.command("validate", help=VALIDATE_HELP)(validate_command)
    group.command("schema", help=SCHEMA_HELP)(schema_command)
    app.add_typer(group, name="config")
