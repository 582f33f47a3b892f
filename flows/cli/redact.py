"""`golden redact SOURCE --out DIR`: the redaction step alone on canonical shards (inspection)."""

from __future__ import annotations

import json
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import typer

from golden_distill.datasets.config_model import ConfigError
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey, PseudonymKeyError, resolve_key

HELP = """Scrub personal data from canonical shards and pseudonymise their keys (redaction only).

SOURCE is a canonical shard (`part-00000.parquet`), a folder of them, or an ingest output folder
(its `cases/` is used). Each shard is redacted in its own process: key rules, keyed pseudonyms,
Presidio recognizers, propagation of every found value through the case, then a verification
re-scan. Cases that fail verification (or whose tenant opted out) are not written; they go to
`DIR/quarantine.jsonl` with a reason and entity types, never values.

Writes `DIR/cases/part-NNNNN.parquet` (golden schema, with the `redaction` counts column),
`DIR/quarantine.jsonl` and `DIR/summary.json`, and prints counts per entity type and per
quarantine reason. The pseudonym key comes from GOLDEN_PSEUDONYM_KEY, else the Prefect Secret
block named in `redaction.key_secret_block`, else `--key-file` (created, mode 0600, on first use:
demo only). Only the key id is ever printed.

Example:

    golden ingest recordings/ --out work/ingest
    GOLDEN_PSEUDONYM_KEY=... golden redact work/ingest --out work/redacted --workers 2
"""

_WORKER: dict[str, Any] = {}


def shard_paths(source: Path) -> list[Path]:
    """Parquet shards under SOURCE (a file, a folder, or an ingest folder with `cases/`)."""
    if source.is_file():
        return [source]
    folder = source / "cases" if (source / "cases").is_dir() else source
    return sorted(folder.glob("*.parquet"))


def _redactor(config: RedactionConfig, key: PseudonymKey, volatile: list[str], opt_out: list[str]):
    """One Redactor per worker process (Presidio engines are built once, then reused)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.redaction.redactor import Redactor

    token = (config.model_dump_json(), key.key_id, tuple(volatile), tuple(opt_out))
    if _WORKER.get("token") != token:
        _WORKER["redactor"] = Redactor.from_config(config, key, volatile, opt_out)
        _WORKER["token"] = token
    return _WORKER["redactor"]


def redact_shard_file(
    path: Path,
    out_path: Path,
    config: RedactionConfig,
    key: PseudonymKey,
    volatile: list[str],
    opt_out: list[str],
) -> dict[str, Any]:
    """Redact one shard file into ``out_path`` (written whole, then renamed)."""
    # heavy: loaded when the command runs, not for `golden --help`
    import pyarrow.parquet as pq

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.redaction.shard import redact_table

    result = redact_table(pq.read_table(path), _redactor(config, key, volatile, opt_out))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_suffix(".parquet.tmp")
    pq.write_table(result.table, tmp, compression="zstd")
    os.replace(tmp, out_path)
    return {
        "shard": path.name,
        "cases_in": result.cases_in,
        "cases_out": result.cases_out,
        "entity_counts": dict(result.entity_counts),
        "reasons": dict(result.reasons),
        "seconds": result.seconds,
        "quarantine": [q.to_entry().to_json(keep_raw=False).decode() for q in result.quarantined],
    }


def redact_command(
    source: Annotated[Path, typer.Argument(help="Canonical shard file or folder.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder.")],
    config_file: Annotated[
        Path | None, typer.Option("--config", help="Pipeline config (default: shipped).")
    ] = None,
    workers: Annotated[int, typer.Option(help="Parallel processes (one shard each).")] = 1,
    key_file: Annotated[
        Path | None,
        typer.Option(help="Demo only: local key file, created (mode 0600) if missing."),
    ] = None,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config

    try:
        cfg = load_pipeline_config(config_file)
    except ConfigError as exc:
        for problem in exc.problems:
            typer.echo(f"{exc.source}: {problem}", err=True)
        raise typer.Exit(2) from None
    shards = shard_paths(source)
    if not shards:
        typer.echo(f"{source}: no Parquet shards found", err=True)
        raise typer.Exit(1)
    try:
        resolution = resolve_key(
            secret_block=cfg.redaction.key_secret_block,
            local_key_file=key_file or cfg.redaction.local_key_file,
        )
    except PseudonymKeyError as exc:
        typer.echo(f"redact: {exc}", err=True)
        raise typer.Exit(2) from None
    if resolution.created_file is not None:
        typer.echo(f"created a local demo pseudonym key at {resolution.created_file} (mode 0600)")
    key = resolution.key
    volatile = list(cfg.ingest.volatile_keys)
    opt_out = list(cfg.funnels.redacted.opt_out_tenants)
    jobs = [(p, out / "cases" / p.name) for p in shards]
    args = (cfg.redaction, key, volatile, opt_out)
    results: list[dict[str, Any]] = []
    failed: list[str] = []
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            futures = [(p, pool.submit(redact_shard_file, p, o, *args)) for p, o in jobs]
            for path, future in futures:
                try:
                    results.append(future.result())
                except Exception as exc:  # one unreadable shard: say which, keep going
                    failed.append(f"{path}: cannot redact ({type(exc).__name__})")
    else:
        for path, out_path in jobs:
            try:
                results.append(redact_shard_file(path, out_path, *args))
            except Exception as exc:
                failed.append(f"{path}: cannot redact ({type(exc).__name__})")
    out.mkdir(parents=True, exist_ok=True)
    summary = _summarise(results, key.key_id)
    summary["failed_shards"] = len(failed)
    with (out / "quarantine.jsonl").open("w", encoding="utf-8") as fh:
        for r in results:
            for line in r.pop("quarantine"):
                fh.write(line)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    _print(summary)
    for line in failed:
        typer.echo(line, err=True)
    if failed:
        raise typer.Exit(1)


def _summarise(results: list[dict[str, Any]], key_id: str) -> dict[str, Any]:
    entities: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for r in results:
        entities.update(r["entity_counts"])
        reasons.update(r["reasons"])
    return {
        "key_id": key_id,
        "shards": len(results),
        "cases_in": sum(r["cases_in"] for r in results),
        "cases_out": sum(r["cases_out"] for r in results),
        "entity_counts": dict(sorted(entities.items())),
        "quarantined": dict(sorted(reasons.items())),
        "seconds": round(sum(r["seconds"] for r in results), 3),
    }


def _print(summary: dict[str, Any]) -> None:
    typer.echo(
        f"redacted {summary['cases_out']:,} of {summary['cases_in']:,} cases in "
        f"{summary['shards']} shard(s); key id {summary['key_id']}"
    )
    typer.echo("replaced, per entity type:")
    for entity, count in summary["entity_counts"].items():
        typer.echo(f"  {entity:<24}{count:>10,}")
    typer.echo(f"quarantined: {sum(summary['quarantined'].values()):,}")
    for reason, count in summary["quarantined"].items():
        typer.echo(f"  {reason:<28}{count:>6,}")


def register(app: typer.Typer) -> None:
    app.command("redact", help=HELP)(redact_command)
