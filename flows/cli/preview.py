"""`golden preview`: what a funnel config would select, without publishing anything."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from golden_distill.datasets.config_model import ConfigError
from golden_distill.flows.cli.preview_text import render_diff, render_preview

HELP = """Run ingest + funnels + quotas on a source; show what would be selected. Publishes nothing.

Prints counts per funnel (members, selected, cut by quotas), overlaps between funnels, breakdowns
per tenant / system / tool, what the quotas cut, and a few example case ids with their reasons.
Output holds ids, names, counts and reasons only, never record text.

SOURCE is raw recordings (files or folders, any format `golden ingest` reads) or canonical Parquet
shards (a `.parquet` file or a folder of them), which skips ingest.

Examples:

    golden preview --config configs/nightly.yaml recordings/

    golden preview --config tuned.yaml --against configs/nightly.yaml --sample 20000 recordings/

With `--against B.yaml` it shows which cases enter and leave between the two configs and why.
`--json` prints the same report for machines.
"""


def _is_canonical(sources: list[str]) -> bool:
    paths = [Path(s) for s in sources]
    return all(p.suffix == ".parquet" or (p.is_dir() and any(p.rglob("*.parquet"))) for p in paths)


def _ingest(sources: list[str], work: Path, fmt: str | None, config: Any) -> tuple[Path, dict]:
    try:
        # heavy: loaded when the command runs, not for `golden --help`
        from golden_distill.datasets.ingest import ingest
    except ImportError:
        raise typer.BadParameter(
            "reading raw recordings needs the ingest module; pass canonical .parquet shards"
        ) from None
    summary = ingest(sources, work, fmt=fmt, config=config.ingest)
    info = {
        "records_read": getattr(summary, "records_read", None),
        "cases": getattr(summary, "cases_written", None),
        "quarantined": dict(getattr(summary, "quarantined", {}) or {}),
    }
    return work / "cases", info


def _load_frame(path_or_sources: Any, sample: int | None, configs: list[Any]) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

    from golden_distill.filters.case_source import read_cases
    from golden_distill.filters.quotas import tiebreak_hash

    frame = read_cases(path_or_sources, *configs)  # only what the funnels read
    seed = configs[0].quotas.seed
    if sample is not None and frame.height > sample:
        keys = frame.select("case_id").with_columns(tiebreak_hash(frame["case_id"], seed))
        keep = keys.sort("tiebreak").head(sample)["case_id"]
        frame = frame.filter(pl.col("case_id").is_in(keep.implode()))
    return frame


def _decide(frame: Any, funnels_cfg: Any) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.runner import decide_selection, score_cases

    return decide_selection(score_cases(frame, funnels_cfg, details=True), funnels_cfg)


def _load_config(path: Path | None) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config

    try:
        return load_pipeline_config(path)
    except ConfigError as exc:
        for problem in exc.problems:
            typer.echo(f"{exc.source}: {problem}", err=True)
        raise typer.Exit(2) from None


def preview_command(
    sources: Annotated[list[str], typer.Argument(help="Recordings or canonical Parquet.")],
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Pipeline YAML to preview (default: the shipped one)."),
    ] = None,
    against: Annotated[
        Path | None, typer.Option(help="Compare with this config: who enters and leaves.")
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="Input format (default: detected).")
    ] = None,
    sample: Annotated[
        int | None, typer.Option(min=1, help="Preview a seeded sample of N cases.")
    ] = None,
    examples: Annotated[int, typer.Option(min=0, help="Example case ids per funnel.")] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.preview import diff_report, preview_report

    started = time.perf_counter()
    cfg = _load_config(config)
    other = _load_config(against) if against is not None else None
    missing = [s for s in sources if not Path(s).exists()]
    if missing:
        typer.echo(f"no such source: {', '.join(missing)}", err=True)
        raise typer.Exit(2)
    with tempfile.TemporaryDirectory(prefix="golden-preview-") as tmp:
        ingest_info: dict[str, Any] = {}
        t0 = time.perf_counter()
        if _is_canonical(sources):
            cases: Any = sources
        else:
            cases, ingest_info = _ingest(sources, Path(tmp) / "ingest", fmt, cfg)
        configs = [cfg.funnels] + ([other.funnels] if other is not None else [])
        frame = _load_frame(cases, sample, configs)
        ingest_seconds = time.perf_counter() - t0
        t1 = time.perf_counter()
        decided = _decide(frame, cfg.funnels)
        report: dict[str, Any] = {
            "config": str(config or "configs/nightly.yaml (shipped)"),
            "preview": preview_report(decided, cfg.funnels, examples=examples),
        }
        if other is not None:
            decided_b = _decide(frame, other.funnels)
            report["against"] = str(against)
            report["diff"] = diff_report(
                decided, decided_b, cfg.funnels, other.funnels, examples=max(examples, 1)
            )
    report["timing"] = {
        "read_seconds": round(ingest_seconds, 3),
        "funnels_seconds": round(time.perf_counter() - t1, 3),
        "wall_seconds": round(time.perf_counter() - started, 3),
    }
    if ingest_info:
        report["ingest"] = ingest_info
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
        return
    typer.echo(render_preview(report))
    if "diff" in report:
        typer.echo(render_diff(report))


def register(app: typer.Typer) -> None:
    app.command("preview", help=HELP)(preview_command)
