"""`golden work`: housekeeping of the work folder (raw data lives there until pruned)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

HELP = """Housekeeping of the work folder (`run.work_dir`).

The work folder holds raw data: candidates before redaction, quarantine files that keep raw
source lines, withheld error details. `golden work prune` removes what is older than a cutoff.

Examples:

    golden work prune --older-than 7d --dry-run
    golden work prune --older-than 7d --config configs/nightly.yaml
    golden work prune --older-than 36h --work-dir ~/golden-data/work
"""


def prune_cmd(
    older_than: Annotated[
        str, typer.Option("--older-than", help="Age cutoff: 7d, 36h, 90m, 2w.")
    ] = "7d",
    work_dir: Annotated[
        str | None, typer.Option("--work-dir", help="The work folder (default: run.work_dir).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Pipeline config giving run.work_dir.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List, delete nothing.")] = False,
) -> None:
    """Remove shard folders, quarantine files, results and logs older than the cutoff.

    Example: `golden work prune --older-than 7d`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.work_retention import parse_duration, prune_older_than

    try:
        age = parse_duration(older_than)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--older-than") from None
    if work_dir is None:
        # heavy: loaded when the command runs, not for `golden --help`
        from golden_distill.flows.config import load_pipeline_config

        try:
            work_dir = load_pipeline_config(config).run.work_dir
        except Exception as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
    if "://" in str(work_dir) and not str(work_dir).startswith("file://"):
        typer.echo(
            f"error: {work_dir} is a URL: expire a remote work folder with the bucket's "
            "lifecycle rule (docs/operating.md, 'Two machines')",
            err=True,
        )
        raise typer.Exit(2)
    report = prune_older_than(Path(work_dir).resolve(), age, now=time.time(), dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    for path in report.removed:
        typer.echo(f"{verb} {path}")
    typer.echo(
        f"{verb} {len(report.removed)} item(s), {report.bytes_removed:,} bytes; "
        f"kept {report.kept} newer than {older_than}"
    )


def register(app: typer.Typer) -> None:
    work = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode="markdown")
    work.command("prune")(prune_cmd)
    app.add_typer(work, name="work")
