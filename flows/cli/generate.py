"""`golden generate --out DIR --sessions N --seed S`: a synthetic corpus with planted truths."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.table import Table

    from golden_distill.synthetic import GenerateSummary

HELP = """Write synthetic enterprise agent traffic, and the truth about it, for demos and tests.

Sessions of 1-3 turns against ERP/MES/CRM/finance/KB/HR/WMS tools, in English and Chinese, with
writes and amounts, failures and retries, hand-offs, low-confidence runs, near-duplicate
families, skewed tenant volumes and personal data wherever real recordings carry it. A handful
of broken lines of each kind (invalid JSON, wrong types, missing fields, an oversized line, a
truncated compressed stream) is planted on purpose.

Writes `DIR/recordings-NNNN.jsonl[.gz|.zst]` (native recordings), `DIR/_truth.json` (what was
planted: counts, broken lines, funnels, families, the opt-out tenant) and
`DIR/_truth.records.jsonl` (per record: family, funnels, personal values and keys). The same
seed and options always give the same bytes. Existing recordings and truth files in DIR are
replaced.

Example:

    golden generate --out .demo/recordings --sessions 100000 --seed 7 --shards 4 --compress zst

Ingest with the planted oversized-line limit: `max_line_bytes` = truth `oversized_line_limit`
(the ingest default unless `--oversized-bytes` was given).
"""


class Compression(StrEnum):
    gz = "gz"
    zst = "zst"
    none = "none"


def summary_table(summary: GenerateSummary) -> Table:
    from rich.table import Table

    table = Table(title="generate summary", show_header=True, header_style="bold")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("sessions", f"{summary.sessions:,}")
    table.add_row("valid records", f"{summary.records:,}")
    table.add_row("files", f"{len(summary.files):,}")
    table.add_row("MB written", f"{summary.bytes_written / 1e6:,.1f}")
    table.add_row("families", f"{summary.family_count:,}")
    table.add_row("exact-duplicate members", f"{summary.exact_group_members:,}")
    table.add_row("same-text pairs", f"{summary.same_text_pairs:,}")
    for funnel, count in sorted(summary.funnel_counts.items()):
        table.add_row(f"funnel {funnel}", f"{count:,}")
    for reason, count in sorted(summary.broken_counts.items()):
        table.add_row(f"broken {reason}", f"{count:,}")
    table.add_row("seconds", f"{summary.seconds:,.1f}")
    return table


def generate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
    sessions: Annotated[int, typer.Option(help="Sessions to generate (1-3 records each).", min=1)],
    seed: Annotated[int, typer.Option(help="Random seed: same seed, same bytes.")] = 0,
    shards: Annotated[int, typer.Option(help="Number of recording files.", min=1)] = 1,
    compress: Annotated[
        Compression, typer.Option(help="Compression of the recording files.")
    ] = Compression.none,
    broken_per_kind: Annotated[
        int, typer.Option(help="Broken lines planted per kind (0 = a clean corpus).", min=0)
    ] = 3,
    oversized_bytes: Annotated[
        int | None,
        typer.Option(help="Line limit the planted oversized lines exceed (default: ingest's)."),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            help="Worker processes (default: one per core from 20,000 sessions; same bytes "
            "whatever the number).",
            min=1,
        ),
    ] = None,
) -> None:
    from rich.console import Console

    from golden_distill.synthetic import generate_corpus
    from golden_distill.synthetic.generate import PARALLEL_FROM_SESSIONS

    if jobs is None:  # worker start-up (imports, value pools) only pays off on big corpora
        jobs = (os.cpu_count() or 1) if sessions >= PARALLEL_FROM_SESSIONS else 1
    try:
        summary = generate_corpus(
            out,
            sessions=sessions,
            seed=seed,
            shards=shards,
            compress=None if compress is Compression.none else compress.value,
            broken_per_kind=broken_per_kind,
            oversized_limit=oversized_bytes,
            jobs=jobs,
        )
    except (ValueError, OSError) as exc:
        Console(stderr=True).print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    console = Console()
    console.print(summary_table(summary))
    console.print(f"recordings and truth: {out}")


def register(app: typer.Typer) -> None:
    app.command("generate", help=HELP)(generate_command)
