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

HELP = """Run the flow's selection on a source (ingest, funnels, dedup, quotas); show what would be
published. Publishes nothing, redacts nothing.

The selection is the one `golden run` makes (the same code: dedup signatures and clustering, then
quotas over the representatives), so the selected ids are the ids a run would publish, apart from
cases redaction refuses. Prints counts per funnel (members, selected, cut by quotas), overlaps,
breakdowns per tenant / system / tool, what dedup and the quotas removed, borderline dedup merges,
and example case ids with their reasons. Output holds ids, names, counts and reasons only, never
record text.

SOURCE is raw recordings (files or folders, any format `golden ingest` reads) or canonical Parquet
shards (a `.parquet` file or a folder of them), which skips ingest.

Examples:

    golden preview --config configs/nightly.yaml recordings/

    golden preview --config tuned.yaml --against configs/nightly.yaml --sample 20000 recordings/

With `--against B.yaml` the source is run through each config with its own ingest, funnel, quota
and dedup settings; it lists every setting that differs, the cases entering and leaving with
their reasons and status under the other config, and cluster changes. `--json` prints the same
report for machines.
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
    if not (work / "cases").exists() or not getattr(summary, "cases_written", 1):
        read = getattr(summary, "records_read", 0) or 0
        quarantined = sum((getattr(summary, "quarantined", {}) or {}).values())
        typer.echo(
            f"nothing to preview: no case was read from {', '.join(sources)} ({read} record(s) "
            f"read, {quarantined} quarantined)",
            err=True,
        )
        raise typer.Exit(2)
    info = {
        "records_read": getattr(summary, "records_read", None),
        "cases": getattr(summary, "cases_written", None),
        "quarantined": dict(getattr(summary, "quarantined", {}) or {}),
    }
    return work / "cases", info


def _load_frame(path_or_sources: Any, sample: int | None, configs: list[Any]) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.case_source import read_cases
    from golden_distill.filters.quotas import tiebreak_hash

    frame = read_cases(path_or_sources, *configs)  # only what the funnels read
    seed = configs[0].quotas.seed
    if sample is not None and frame.height > sample:
        keys = frame.select("case_id").with_columns(tiebreak_hash(frame["case_id"], seed))
        keep = keys.sort("tiebreak").head(sample)["case_id"]
        frame = frame.filter(pl.col("case_id").is_in(keep.implode()))
    return frame


def _select(cases: Any, frame: Any, cfg: Any) -> tuple[Any, Any, Any, Any]:
    """The flow's selection over ``frame`` (what the funnels read) and, for the candidates'
    dedup signatures, their whole rows from ``cases``: (decisions with status, cluster table,
    mixed pairs: same content, different work, the scored decisions before the choice)."""
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.case_source import as_lazy
    from golden_distill.filters.dedup.borderline import mixed_pairs
    from golden_distill.filters.dedup.signature import signatures
    from golden_distill.filters.runner import score_cases
    from golden_distill.filters.selection import choose, cluster_candidates

    scored = score_cases(frame, cfg.funnels, details=True)
    clusters = mixed = None
    if cfg.dedup.enabled:
        chosen = scored.filter(pl.col("candidate")).select("case_id", "funnels", "value_score")
        rows = (
            as_lazy(cases)
            .join(chosen.unique("case_id").lazy(), on="case_id", how="inner")
            .unique("case_id", keep="first")
            .collect()
        )
        sigs = signatures(rows, cfg.dedup)
        clusters = cluster_candidates(scored, sigs, cfg.dedup)
        mixed = mixed_pairs(sigs)
    return choose(scored, clusters, cfg.funnels, cfg.dedup).decisions, clusters, mixed, scored


def _check_redaction(cases: Any, scored: Any, clusters: Any, cfg: Any, tmp: Path) -> Any:
    """``preview_refusals.predict_refusals``; a missing or refused pseudonym key exits 2."""
    # heavy: loaded when the option is used
    from golden_distill.flows.cli.preview_refusals import predict_refusals
    from golden_distill.redaction.keys import PseudonymKeyError

    try:
        return predict_refusals(cases, scored, clusters, cfg, tmp)
    except PseudonymKeyError as exc:
        typer.echo(f"--check-redaction needs the run's pseudonym key: {exc}", err=True)
        raise typer.Exit(2) from None


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
    ids_out: Annotated[
        Path | None,
        typer.Option("--ids-out", help="Write the selected case ids here, one per line."),
    ] = None,
    case: Annotated[
        list[str] | None,
        typer.Option(
            "--case",
            help="Explain this case (repeatable): selected, or why not (no_funnel, gate, "
            "dedup and the member selected in its place, quota), with its funnel reasons.",
        ),
    ] = None,
    check_redaction: Annotated[
        bool,
        typer.Option(
            "--check-redaction",
            help="Redact the selected cases as the run would (needs the pseudonym key): "
            "report the refusals, replacements and lost clusters; --ids-out then lists what "
            "the run publishes.",
        ),
    ] = False,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

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
        refusals: tuple[set[str], dict[str, Any]] | None = None
        read_seconds = select_seconds = 0.0
        results = []
        for index, each in enumerate([cfg] + ([other] if other is not None else [])):
            t0 = time.perf_counter()
            if _is_canonical(sources):
                cases: Any = sources
            elif index and each.ingest == cfg.ingest:
                cases = results[0][0]  # same ingest settings: the same cases
            else:
                cases, info = _ingest(sources, Path(tmp) / f"ingest-{index}", fmt, each)
                ingest_info = ingest_info or info
            frame = _load_frame(cases, sample, [each.funnels])
            t1 = time.perf_counter()
            decided, clusters, mixed, scored = _select(cases, frame, each)
            if index == 0 and check_redaction:
                refusals = _check_redaction(cases, scored, clusters, each, Path(tmp))
            read_seconds += t1 - t0
            select_seconds += time.perf_counter() - t1
            results.append((cases, decided, clusters, mixed))
        if ids_out is not None:
            selected = results[0][1].filter(pl.col("status") == "selected")
            ids = selected["case_id"].to_list() if refusals is None else refusals[0]
            ids_out.write_text("".join(f"{c}\n" for c in sorted(ids)))
        report: dict[str, Any] = {
            "config": str(config or "configs/nightly.yaml (shipped)"),
            "preview": preview_report(
                results[0][1], cfg.funnels, examples=examples, clusters=results[0][2],
                dedup=cfg.dedup, mixed=results[0][3],
            ),
        }  # fmt: skip
        if case:
            report["cases"] = explain_cases(results[0][1], results[0][2], case)
        if other is not None:
            report["against"] = str(against)
            report["diff"] = diff_report(
                results[0][1], results[1][1], cfg, other, examples=max(examples, 1)
            )
    report["timing"] = {
        "read_seconds": round(read_seconds, 3),
        "funnels_seconds": round(select_seconds, 3),
        "wall_seconds": round(time.perf_counter() - started, 3),
    }
    if ingest_info:
        report["ingest"] = ingest_info
    if refusals is not None:
        report["preview"]["redaction_refusals"] = refusals[1]
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
        return
    typer.echo(render_preview(report))
    if "diff" in report:
        typer.echo(render_diff(report))
    for line in render_cases(report.get("cases") or []):
        typer.echo(line)


def explain_cases(decided: Any, clusters: Any, ids: list[str]) -> list[dict[str, Any]]:
    """Each asked case's decision, as a run's decisions table would hold it (status, funnels,
    score, cluster, the member selected in its place) with its funnel reasons."""
    # heavy: loaded when the option is used
    import polars as pl

    from golden_distill.filters.decision_table import decision_table, explain

    selected = decided.filter(pl.col("status") == "selected").get_column("case_id")
    table = decision_table(
        decided.lazy(),
        membership=clusters,
        published=selected.to_list(),
    ).with_columns(pl.col("status").replace("published", "selected"))
    reasons = dict(
        decided.select("case_id", pl.col("funnel_reasons").cast(pl.String))
        .unique("case_id", keep="first")
        .iter_rows()
    )
    out = []
    for case_id in ids:
        rows = table.filter(pl.col("case_id") == case_id).to_dicts()
        if not rows:
            out.append({"case_id": case_id, "status": None, "why": "not among the cases read"})
            continue
        row = rows[0]
        out.append(
            {
                **row,
                "why": explain(row, "selected"),
                "reasons": json.loads(reasons.get(case_id) or "{}"),
            }
        )
    return out


def render_cases(cases: list[dict[str, Any]]) -> list[str]:
    lines = []
    for case in cases:
        lines.append(f"case {case['case_id']}: {case['why']}")
        for funnel, reason in (case.get("reasons") or {}).items():
            lines.append(f"  why {funnel}: {reason}")
    return lines


def register(app: typer.Typer) -> None:
    app.command("preview", help=HELP)(preview_command)
