"""`golden sets strength` (the share of boundary-level mutants a set kills) and `golden sets
lookup --trace` (a production trace id -> the cases that carry its pseudonym)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from golden_distill.flows.cli.store_access import (
    ConfigOpt,
    JsonOpt,
    OptionsOpt,
    PublicKeyOpt,
    StoreOpt,
    guard,
    open_ref,
    open_store,
    publish_config,
    trusted_keys,
)


def _usage(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _check_choice(option: str, value: str | None, known: list[str]) -> None:
    if value is None or value in known:
        return
    close = difflib.get_close_matches(value, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    _usage(f"{option} {value!r}: not in this set{hint} (known: {', '.join(known) or 'none'})")


def strength_cmd(
    ref: Annotated[str, typer.Argument(help="The version: NAME@VERSION or NAME@ALIAS.")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    funnel: Annotated[
        str | None, typer.Option("--funnel", help="Only the cases of this funnel.")
    ] = None,
    split: Annotated[
        str | None, typer.Option("--split", help="Only this split: dev, regression or holdout.")
    ] = None,
    gate: Annotated[
        Path | None, typer.Option("--gate", help="Gate config (default: the shipped gate.yaml).")
    ] = None,
    mutant: Annotated[
        list[str] | None, typer.Option("--mutant", help="Only these mutants; repeatable.")
    ] = None,
    min_kill_share: Annotated[
        float | None,
        typer.Option(
            "--min-kill-share",
            min=0.0,
            max=1.0,
            help="Flag the set below this (default: publish.strength.min_kill_share of --config).",
        ),
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    public_key: PublicKeyOpt = None,
) -> None:
    """Measure how many faults the set catches: replay it as recorded (the baseline, every
    boundary from the recording), then under each mutant of a fixed catalogue (a write dropped,
    duplicated, swapped or moved; an amount, id or status argument changed; an unrecorded tool
    called; a read skipped; another intent), and count the cases whose replay the gate fails.

    Prints the kill share of the whole set, per mutant, funnel, split and cluster, beside the
    baseline. Exit code: 0 the set kills at least `--min-kill-share` (default: the
    `publish.strength.min_kill_share` of `--config`, 0.8 shipped), 1 it is flagged (kills less),
    2 a usage or data error.

    Example: `golden sets strength nightly@latest --store ./golden-store --min-kill-share 0.85`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.replay.config import SHIPPED_GATE, load_replay_config
    from golden_distill.datasets.replay.mutants import MUTANTS
    from golden_distill.datasets.replay.strength import measure_strength, strength_lines
    from golden_distill.filters.curation_config import SPLITS

    if min_kill_share is None:
        min_kill_share = publish_config(config).strength.min_kill_share
    share: float = min_kill_share
    for name in mutant or []:
        _check_choice("--mutant", name, list(MUTANTS))
    _check_choice("--split", split, list(SPLITS))
    fs = open_store(store, storage_options, config)
    gate_config = guard(lambda: load_replay_config(gate or SHIPPED_GATE))
    golden = guard(lambda: open_ref(fs, ref, public_key=trusted_keys(public_key)))
    _check_choice("--funnel", funnel, sorted(golden.manifest["counts"].get("per_funnel", {})))

    def run() -> Any:
        cases = (c.case for c in golden.cases(funnel=funnel, split=split))
        return measure_strength(
            cases,
            gate_config,
            volatile_keys=golden.volatile_keys,
            mutants=mutant or None,
            min_kill_share=share,
            baseline_version=f"{golden.name}@{golden.version}",
        )

    report = guard(run)
    if as_json:
        typer.echo(json.dumps({"ref": f"{golden.name}@{golden.version}", **report.to_dict()}))
    else:
        typer.echo(f"{golden.name}@{golden.version}")
        for line in strength_lines(report):
            typer.echo(line)
    raise typer.Exit(1 if report.flagged else 0)


def lookup_cmd(
    ref: Annotated[str, typer.Argument(help="The version: NAME@VERSION or NAME@ALIAS.")],
    trace: Annotated[str, typer.Option("--trace", help="The production trace id (as recorded).")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
    public_key: PublicKeyOpt = None,
) -> None:
    """Find the cases of a production trace: its pseudonym is computed with the pseudonym key
    (GOLDEN_PSEUDONYM_KEY, else what the pipeline config names), as redaction computed it, and
    looked up in the set. Prints the pseudonym and the case id(s); never the raw id.

    Exit code: 0 found, 1 no case of the set carries it, 2 a usage error (no key...).

    Example: `GOLDEN_PSEUDONYM_KEY=... golden sets lookup nightly@latest --trace 4bf92f35...`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config
    from golden_distill.redaction.keys import PseudonymKeyError, resolve_key
    from golden_distill.redaction.trace_lookup import find_trace, trace_pseudonyms

    pipeline = guard(lambda: load_pipeline_config(config))
    try:
        key = resolve_key(
            secret_block=pipeline.redaction.key_secret_block,
            local_key_file=pipeline.redaction.local_key_file,
        ).key
    except PseudonymKeyError as exc:
        _usage(str(exc))
    fs = open_store(store, storage_options, config)
    golden = guard(lambda: open_ref(fs, ref, public_key=trusted_keys(public_key)))
    set_key = golden.manifest.get("key_id")
    if set_key is not None and set_key != key.key_id:
        typer.echo(
            f"warning: {golden.name}@{golden.version} was made with key {set_key}, this key is "
            f"{key.key_id}: its pseudonyms differ",
            err=True,
        )
    forms = trace_pseudonyms(trace.strip(), key.secret, pipeline.redaction)
    matches = guard(lambda: find_trace(golden, forms))
    label = f"{golden.name}@{golden.version}"
    if not matches:
        typer.echo(f"{label}: no case carries trace {forms[0]} (the pseudonym of the given id)")
        raise typer.Exit(1)
    for match in matches:
        typer.echo(f"{label}: trace {match.trace_id} -> case {match.case_id}")


def register(sets: typer.Typer) -> None:
    sets.command("strength")(strength_cmd)
    sets.command("lookup")(lookup_cmd)
