"""`golden config init|validate|schema`: hand a user the packaged default config to edit, check
a pipeline config, or print its JSON Schema for editor completion (e.g. yaml-language-server's
`# yaml-language-server: $schema=...`).

A wheel user has no repository checkout, so `init` is how they get the commented default file;
`validate` with no path checks that same packaged file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from golden_distill.datasets.config_model import ConfigError

VALIDATE_HELP = """Check a pipeline config file: every section, every key, every value.

Unknown keys and bad values are reported with the file, the dotted key path and, for a typo, the
nearest valid key. Without FILE, the packaged default (`golden config init` writes it) is checked.
Exit code 0 when valid, 2 otherwise (as for a config error in every other command).

Example:

    golden config validate configs/nightly.yaml
"""

INIT_HELP = """Write a shipped config, with its comments, to PATH for you to edit.

The default is the nightly pipeline config (`nightly.yaml`); `--name` picks another shipped one
(`golden config init --list` shows them). An existing file is never overwritten unless you pass
`--force`. Paths inside it such as `configs/tools/tau-bench.yaml` keep working from anywhere:
they resolve to the packaged copies when no such file exists beside you.

Example:

    golden config init my-nightly.yaml && $EDITOR my-nightly.yaml
    golden config validate my-nightly.yaml
"""

#: Exit code of a config error, the same in every command (docs/configuration.md).
CONFIG_ERROR_EXIT = 2
#: The packaged config `init` writes and `validate` checks when no file is named.
DEFAULT_CONFIG = "nightly.yaml"


def shipped_config_names() -> list[str]:
    """Every pipeline config shipped at the top of `configs/` (not tool catalogues or the gate)."""
    from golden_distill.datasets.shipped_configs import shipped_config

    folder = shipped_config(DEFAULT_CONFIG).parent
    return sorted(
        p.name for p in folder.glob("*.yaml") if p.name not in {"gate.yaml", "alerts.yaml"}
    )


def init_command(
    path: Annotated[
        Path | None, typer.Argument(help="Where to write the config (e.g. my-nightly.yaml).")
    ] = None,
    name: Annotated[
        str, typer.Option("--name", help="Which shipped config to write.")
    ] = DEFAULT_CONFIG,
    force: Annotated[bool, typer.Option("--force", help="Overwrite PATH if it exists.")] = False,
    list_names: Annotated[
        bool, typer.Option("--list", help="List the shipped configs and exit.")
    ] = False,
) -> None:
    from golden_distill.datasets.shipped_configs import shipped_config

    names = shipped_config_names()
    if list_names:
        for shipped in names:
            typer.echo(shipped)
        return
    if path is None:
        typer.echo("golden config init: give the PATH to write (or --list).", err=True)
        raise typer.Exit(CONFIG_ERROR_EXIT)
    if name not in names:
        typer.echo(
            f"golden config init: no shipped config {name!r}; shipped: {', '.join(names)}",
            err=True,
        )
        raise typer.Exit(CONFIG_ERROR_EXIT)
    if path.exists() and not force:
        typer.echo(f"golden config init: {path} exists; pass --force to overwrite it.", err=True)
        raise typer.Exit(CONFIG_ERROR_EXIT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(shipped_config(name).read_bytes())
    typer.echo(
        f"wrote {path} (from the packaged {name}); check it with: golden config validate {path}"
    )


SCHEMA_HELP = """Print the JSON Schema of the pipeline config (all sections, with descriptions).

Point your editor at it for completion and inline docs, e.g.:

    golden config schema > golden-config.schema.json
"""


def validate_command(
    file: Annotated[
        Path | None,
        typer.Argument(help="The YAML config file to check (default: the packaged default)."),
    ] = None,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.shipped_configs import shipped_config
    from golden_distill.flows.config import load_pipeline_config

    if file is None:
        file = shipped_config(DEFAULT_CONFIG)
    try:
        load_pipeline_config(file)
    except ConfigError as exc:
        for problem in exc.problems:
            typer.echo(f"{exc.source}: {problem}", err=True)
        raise typer.Exit(CONFIG_ERROR_EXIT) from None
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
        help="Write the default config to edit, check config files, print their JSON Schema.",
        no_args_is_help=True,
    )
    group.command("init", help=INIT_HELP)(init_command)
    group.command("validate", help=VALIDATE_HELP)(validate_command)
    group.command("schema", help=SCHEMA_HELP)(schema_command)
    app.add_typer(group, name="config")
