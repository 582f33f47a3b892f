"""`golden review`: export the cases a person should look at, import their decisions.

The sheet holds ids, funnel reasons, numbers, split, trust and the recorded outcome's state and
reward from the published (redacted) version; never request text.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
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

HELP = """Human review of published cases: export a sheet, fill in decisions, import it.

Examples:

    golden review export nightly@latest --store ./store --out sheet.csv
    golden review import sheet.csv --store ./store --set nightly

The sheet lists the cases worth a look: new since the parent version, changed, or not confirmed
by an oracle (trust unconfirmed). Fill in `decision` (confirm, reject, correct), `reason`
(required to reject), `corrected_final_state` / `corrected_actions` (JSON) for a correction, and
`reviewer`. The next `golden run` applies the log: rejected cases never come back (by case id and
by content hash, so the same run recorded again stays out), corrections replace the expected
outcome, confirmed cases get trust `human`.
"""

COLUMNS = (
    "case_id", "exact_hash", "why_review", "funnel_reasons", "value_score", "split", "trust",
    "reward", "final_state", "decision", "reason", "corrected_final_state", "corrected_actions",
    "reviewer",
)  # fmt: skip


def _rows(golden: Any, everything: bool) -> list[dict[str, Any]]:
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.drift import case_changes

    frame = pl.from_arrow(golden.read_table())
    assert isinstance(frame, pl.DataFrame)
    parent_ids: set[str] = set()
    changed: set[str] = set()
    parent = golden.manifest.get("parent_version")
    if parent:
        other = open_ref(golden.store, f"{golden.name}@{parent}", verify=False)
        previous = pl.from_arrow(other.read_table())
        assert isinstance(previous, pl.DataFrame)
        parent_ids = set(previous["case_id"].to_list())
        changed = {c["case_id"] for c in case_changes(previous, frame)}
    hashes: dict[str, str] = {}
    clusters = golden.clusters()
    if clusters is not None:
        hashes = dict(zip(clusters.column("case_id").to_pylist(),
                          clusters.column("exact_hash").to_pylist(), strict=True))  # fmt: skip
    rows = []
    for row in frame.sort("case_id").iter_rows(named=True):
        why = []
        if parent and row["case_id"] not in parent_ids:
            why.append("new")
        if row["case_id"] in changed:
            why.append("changed")
        if (row.get("trust") or "unconfirmed") == "unconfirmed":
            why.append("unconfirmed")
        if not why and not everything:
            continue
        outcome = row.get("outcome") or {}
        rows.append(
            {
                "case_id": row["case_id"],
                "exact_hash": hashes.get(row["case_id"], ""),
                "why_review": "+".join(why) or "-",
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
                **{c: "" for c in COLUMNS[9:]},
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
        writer.writerows(rows)
        out.write_text(buffer.getvalue())
    else:
        head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(str(r[c]))}</td>" for c in COLUMNS) + "</tr>"
            for r in rows
        )
        out.write_text(
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>review "
            f"{escape(ref)}</title></head><body><h1>Review {escape(ref)}</h1>"
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
    import orjson

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.layout import check_set_name
    from golden_distill.filters.review import check_row, log_path

    if not sheet.is_file():
        typer.echo(f"no such sheet: {sheet}", err=True)
        raise typer.Exit(2)
    guard(lambda: check_set_name(set_name))
    fs = open_store(store, storage_options, config)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    entries = []
    with sheet.open(newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                entry = check_row(row, line)
            except ValueError as exc:
                typer.echo(f"{sheet}: {exc}", err=True)
                raise typer.Exit(2) from None
            if entry is not None:
                entries.append({**entry, "at": at})
    if not entries:
        typer.echo("no decisions in the sheet: nothing recorded")
        return
    data = b"".join(orjson.dumps(e, option=orjson.OPT_SORT_KEYS) + b"\n" for e in entries)
    fs.update(log_path(set_name), lambda old: (old or b"") + data)
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry["decision"]] = counts.get(entry["decision"], 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    typer.echo(f"recorded {len(entries)} decision(s) for {set_name} ({summary}); "
               "the next run applies them")  # fmt: skip


def register(app: typer.Typer) -> None:
    review = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode="markdown")
    review.command("export")(export_cmd)
    review.command("import")(import_cmd)
    app.add_typer(review, name="review")
