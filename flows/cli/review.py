"""`golden review`: export the cases a person should look at, review them in the browser, import
decisions.

Everything shown comes from the published (redacted) version: ids, funnel reasons, numbers,
split, trust, the request, the transcript and the recorded and expected outcomes.
"""

from __future__ import annotations

import csv
import getpass
import io
import json
from html import escape
from pathlib import Path
from typing import Annotated, Any

import typer

from golden_distill.flows.cli.store_access import (
    ConfigOpt,
    OptionsOpt,
    StoreOpt,
    guard,
    open_ref,
    open_store,
)

HELP = """Human review of published cases: in the browser, or as a sheet to fill in and import.

Examples:

    golden review serve nightly@latest --store ./store
    golden review export nightly@latest --store ./store --out sheet.csv
    golden review import sheet.csv --store ./store --set nightly

`serve` starts a review page on 127.0.0.1 (open the printed URL: it carries a token): a queue
to filter by funnel, split, trust, cluster, task or decision, and per case the transcript, tool
calls, outcomes, why it is in and its cluster; confirm (c), reject with a reason (r) or correct
the expected outcome (e), j/k to move. The sheet lists the cases worth a look: new since the
parent version (every case of a first version), changed, or not confirmed by an oracle (trust
unconfirmed). Fill in `decision` (confirm, reject, correct), `reason` (required to reject),
`corrected_final_state` / `corrected_actions` (JSON) for a correction, and `reviewer`. Both
append to the set's review log; the next `golden run` applies it: rejected cases never come back
(by case id and by content hash, so the same run recorded again stays out), corrections replace
the expected outcome, confirmed cases get trust `human`.
"""

COLUMNS = (
    "case_id", "exact_hash", "why_review", "funnel_reasons", "value_score", "split", "trust",
    "reward", "final_state", "request", "transcript", "expected", "decision", "reason",
    "corrected_final_state", "corrected_actions", "reviewer",
)  # fmt: skip
#: The columns a reviewer fills in.
DECISION_COLUMNS = COLUMNS[COLUMNS.index("decision") :]


#: Columns of recorded (untrusted) text; `import` never reads them back.
TEXT_COLUMNS = ("funnel_reasons", "final_state", "request", "transcript", "expected")


def _cell(column: str, value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: recorded text starting like a formula
    (``= + - @``, tab, carriage return) gets a leading ``'``, so opening the sheet never runs
    what a recording holds."""
    if (
        column in TEXT_COLUMNS
        and isinstance(value, str)
        and value[:1] in ("=", "+", "-", "@", "\t", "\r")
    ):
        return "'" + value
    return value


def _rows(golden: Any, everything: bool) -> list[dict[str, Any]]:
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.review_case import expected_text, transcript_text
    from golden_distill.filters.review_queue import why_review
    from golden_distill.flows.review_app.source import parent_frame

    frame = pl.from_arrow(golden.read_table())
    assert isinstance(frame, pl.DataFrame)
    frame = frame.sort("case_id")
    previous = parent_frame(golden, lambda v: open_ref(golden.store, f"{golden.name}@{v}",
                                                       verify=False))  # fmt: skip
    hashes: dict[str, str] = {}
    clusters = golden.clusters()
    if clusters is not None:
        hashes = dict(zip(clusters.column("case_id").to_pylist(),
                          clusters.column("exact_hash").to_pylist(), strict=True))  # fmt: skip
    rows = []
    whys = why_review(frame, previous).to_list()
    for row, why in zip(frame.iter_rows(named=True), whys, strict=True):
        if not why and not everything:
            continue
        outcome = row.get("outcome") or {}
        rows.append(
            {
                "case_id": row["case_id"],
                "exact_hash": hashes.get(row["case_id"], ""),
                "why_review": why or "-",
                "funnel_reasons": "; ".join(
                    f"{k}: {v}"
                    for k, v in json.loads(row.get("funnel_reasons") or "{}").items()
                    if k != "redacted"
                ),
                "value_score": row.get("value_score"),
                "split": row.get("split") or "",
                "trust": row.get("trust") or "",
                "reward": outcome.get("reward"),
                "final_state": outcome.get("final_state") or "",
                "request": row.get("user_input") or "",
                "transcript": transcript_text(row),
                "expected": expected_text(row),
                **{c: "" for c in DECISION_COLUMNS},
            }
        )
    return rows


def export_cmd(
    ref: Annotated[str, typer.Argument(help="The version to review: NAME@VERSION|ALIAS.")],
    out: Annotated[Path, typer.Option("--out", help="sheet.csv or sheet.html")],
    everything: Annotated[
        bool,
        typer.Option("--all", help="Every case, not only the new, changed or unconfirmed."),
    ] = False,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Write the cases to review (new, changed, unconfirmed) with their reasons and outcome.

    Example: `golden review export nightly@latest --out sheet.csv`
    """
    if out.suffix not in (".csv", ".html"):
        raise typer.BadParameter("use a .csv or .html file", param_hint="--out")
    fs = open_store(store, storage_options, config)
    golden = guard(lambda: open_ref(fs, ref))
    rows = guard(lambda: _rows(golden, everything))
    if out.suffix == ".csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({k: _cell(k, v) for k, v in r.items()} for r in rows)
        out.write_text(buffer.getvalue())
    else:
        head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(str(r[c]))}</td>" for c in COLUMNS) + "</tr>"
            for r in rows
        )
        out.write_text(
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>review "
            f"{escape(ref)}</title><style>td{{white-space:pre-wrap;vertical-align:top}}</style>"
            "</head><body><h1>Review {escape(ref)}</h1>"
            f"<table><tr>{head}</tr>{body}</table></body></html>"
        )
    typer.echo(f"{len(rows)} case(s) to review written to {out}")


def import_cmd(
    sheet: Annotated[Path, typer.Argument(help="A filled-in review sheet (.csv).")],
    set_name: Annotated[str, typer.Option("--set", help="The golden set the sheet is about.")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Record the sheet's decisions in the set's review log; the next run applies them.

    Example: `golden review import sheet.csv --store ./store --set nightly`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.layout import check_set_name
    from golden_distill.filters.review import check_row
    from golden_distill.flows.review_log import record_decisions

    if not sheet.is_file():
        typer.echo(f"no such sheet: {sheet}", err=True)
        raise typer.Exit(2)
    guard(lambda: check_set_name(set_name))
    fs = open_store(store, storage_options, config)
    entries = []
    with sheet.open(newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                entry = check_row(row, line)
            except ValueError as exc:
                typer.echo(f"{sheet}: {exc}", err=True)
                raise typer.Exit(2) from None
            if entry is not None:
                entries.append(entry)
    if not entries:
        typer.echo("no decisions in the sheet: nothing recorded")
        return
    counts = record_decisions(fs, set_name, entries)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    typer.echo(f"recorded {len(entries)} decision(s) for {set_name} ({summary}); "
               "the next run applies them")  # fmt: skip


def serve_cmd(
    ref: Annotated[str, typer.Argument(help="The version to review: NAME@VERSION|ALIAS.")],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free).")
    ] = 8765,
    reviewer: Annotated[
        str | None,
        typer.Option("--reviewer", help="Name logged with each decision (default: your login)."),
    ] = None,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve a review page for one version on 127.0.0.1 until Ctrl-C; decisions go to the
    set's review log (as `golden review import` writes them) and the next run applies them.

    Only the published (redacted) version and its parent are read, never a work folder. Open
    the printed URL: requests without its token are refused (403).

    Example: `golden review serve nightly@latest --store ./store --reviewer ana`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.review_app.serve import serve
    from golden_distill.flows.review_app.source import ReviewSource, parent_frame

    name = (reviewer or "").strip()
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError):  # no login name (a container without a user entry)
            raise typer.BadParameter("give your name", param_hint="--reviewer") from None
    fs = open_store(store, storage_options, config)
    golden = guard(lambda: open_ref(fs, ref))

    def load() -> ReviewSource:
        previous = parent_frame(golden, lambda v: open_ref(fs, f"{golden.name}@{v}"))
        return ReviewSource(golden, previous, name)

    source = guard(load)

    def announce(url: str) -> None:
        typer.echo(f"reviewing {source.ref} ({len(source.published)} cases) as {name}")
        typer.echo(f"open {url}")
        typer.echo("decisions go to the set's review log; Ctrl-C stops the page")

    try:
        serve(source, port, announce)
    except OSError as exc:  # the port is taken, or not ours to bind
        typer.echo(f"error: cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    review = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode="markdown")
    review.command("export")(export_cmd)
    review.command("import")(import_cmd)
    review.command("serve")(serve_cmd)
    app.add_typer(review, name="review")
