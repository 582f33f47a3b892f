"""`golden ingest SOURCE... --out DIR`: read recordings into canonical shards, with a report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from golden_distill.datasets.config_model import ConfigError
from golden_distill.datasets.sources.config import IngestConfig

if TYPE_CHECKING:
    from golden_distill.datasets.ingest import IngestSummary

HELP = """Read recordings into canonical Parquet shards (one row per agent run).

Each SOURCE is a file, a folder of recording files, a glob or an fsspec URL (`s3://...`), or a
database URL for evidence tables. The format of each file is recognised from its first bytes:
native JSONL recordings (`.jsonl`, `.jsonl.gz`, `.jsonl.zst`), chat transcripts, evidence
tables or OTLP JSON; pass `--format` when it cannot be.

Writes `DIR/cases/part-NNNNN.parquet`, `DIR/quarantine.jsonl` (every record that could not be
read, with file, line and reason) and `DIR/summary.json`, and prints the summary as a table.
Quarantined records are counted, not fatal: the exit code is 0 unless a source could not be
read at all or no case came out of the input (then 1; 2 for a bad command line or config). An
input is stopped after `ingest.max_consecutive_quarantined` (1,000) records in a row could not
be read, with a hint when it looks like another format (`did you mean --format chat?`); the
quarantine keeps at most `ingest.quarantine_raw_bytes` of each record and
`ingest.quarantine_max_entries` entries per input (the rest counted, one summary line each).

`--jobs N` reads with N worker processes (`--jobs 0`: one per core): whole compressed files,
and line-aligned byte ranges of large plain `.jsonl` files, so one big file uses every core.
The cases, their line numbers and the quarantine are the same as with one process.

Example:

    golden ingest recordings/2026-11-28/*.jsonl.zst --out work/ingest --jobs 0
"""


def summary_table(summary: IngestSummary) -> Table:
    """The summary as a rich table: counts, quarantine reasons, volume and speed."""

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.quarantine import quarantine_hint

    table = Table(title="ingest summary", show_header=True, header_style="bold")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("sources read", f"{len(summary.sources) - len(summary.failed):,}")
    if summary.failed:
        table.add_row("[red]sources failed[/red]", f"[red]{len(summary.failed):,}[/red]")
    table.add_row("records read", f"{summary.records_read:,}")
    table.add_row("cases written", f"{summary.cases_written:,}")
    table.add_row("quarantined", f"{summary.quarantined_total:,}")
    for reason, count in sorted(summary.quarantined.items()):
        table.add_row(f"  {reason}", f"{count:,}")
        hint = quarantine_hint(reason)
        if hint:
            table.add_row(f"    [dim]hint: {hint}[/dim]", "")
    table.add_row("shards", f"{len(summary.shards):,}")
    table.add_row("MB read", f"{summary.bytes_read / 1e6:,.1f}")
    table.add_row("seconds", f"{summary.seconds:,.2f}")
    table.add_row("MB/s", f"{summary.mb_per_second:,.1f}")
    return table


class _ProgressDisplay:
    """A live 'records so far' line on stderr (only when stderr is a terminal)."""

    def __init__(self) -> None:

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("reading: {task.fields[records]:,} records, {task.fields[mb]:,.1f} MB"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.progress.add_task("ingest", records=0, mb=0.0)

    def __call__(self, records: int, bytes_read: int) -> None:
        self.progress.update(self.task, records=records, mb=bytes_read / 1e6)

    def __enter__(self) -> _ProgressDisplay:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def ingest_command(
    sources: Annotated[
        list[str], typer.Argument(help="Files, folders, globs or URLs to read.", show_default=False)
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="native|chronicle|tau2|chat|evidence|otel (default: recognised per source).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Pipeline config YAML; its `ingest:` section is used."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option(help="Replace ingest output already in --out.")
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Worker processes (0: one per core; 1: read in this process).",
        ),
    ] = 1,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON instead of a table.")
    ] = False,
) -> None:

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.ingest import IngestError, ingest
    from golden_distill.datasets.sources.registry import ADAPTERS

    err = Console(stderr=True)
    if fmt is not None and fmt not in ADAPTERS:
        err.print(
            f"unknown --format {fmt!r}; known: {', '.join(ADAPTERS)}", markup=False, soft_wrap=True
        )
        raise typer.Exit(2)
    ingest_config = IngestConfig()
    if config is not None:
        # heavy: loaded when the command runs, not for `golden --help`
        from golden_distill.flows.config import load_pipeline_config

        try:
            ingest_config = load_pipeline_config(config).ingest
        except ConfigError as exc:
            for problem in exc.problems:
                err.print(f"{exc.source}: {problem}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    display: Any = _ProgressDisplay() if sys.stderr.isatty() else None
    try:
        if display is not None:
            with display:
                summary = ingest(
                    sources, out, fmt=fmt, config=ingest_config, progress=display,
                    overwrite=overwrite, jobs=jobs,
                )  # fmt: skip
        else:
            summary = ingest(
                sources, out, fmt=fmt, config=ingest_config, overwrite=overwrite, jobs=jobs
            )
    except IngestError as exc:
        err.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None

    for failed in summary.failed:
        err.print(
            f"error: {failed.error}", markup=False, highlight=False, style="red", soft_wrap=True
        )
    for source in summary.sources:
        if source.hint and source.error is None:
            err.print(
                f"warning: no case read from {source.uri}: {source.hint}",
                markup=False, highlight=False, style="yellow", soft_wrap=True,
            )  # fmt: skip
    empty = summary.nothing_read() if not summary.failed else None
    if empty is not None:
        err.print(
            f"error: no case read: {empty}", markup=False, highlight=False, style="red",
            soft_wrap=True,
        )  # fmt: skip
    if json_out:
        typer.echo((out / "summary.json").read_text(encoding="utf-8"), nl=False)
    else:
        console = Console()
        console.print(summary_table(summary))
        console.print(
            f"shards: {out / 'cases'}   quarantine: {summary.quarantine_path}",
            markup=False,
            soft_wrap=True,
        )
    if summary.failed or empty is not None:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("ingest", help=HELP)(ingest_command)
