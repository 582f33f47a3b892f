"""`golden replay` (a golden set as a regression gate) and `golden export` (for other tools)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from golden_distill.flows.cli.store_access import (
    OptionsOpt,
    PublicKeyOpt,
    StoreOpt,
    guard,
    open_ref,
    open_store,
    trusted_keys,
)

REPLAY_HELP = """Replay a golden set against a new agent version and gate the release.

Every tool call the agent makes is served from the recording (never a live system); the clock is
frozen at the recorded time and randomness is seeded per case. Writes
`OUT/regression_diff_result.parquet`, `OUT/run_summary.json` and `OUT/report.html`.

Exit code: 0 the gate passes (warnings included), 1 it fails, 2 a usage or data error (an
unknown funnel or split, an agent that returns anything but AgentResult or raises on every
case: the reason and traceback go to stderr and `OUT/report.html`).

Model and route steps are served from the recording too (`tools.llm.complete(...)`,
`tools.route(...)`): a full replay makes zero model calls. `--live NAME,...` sends those
boundaries (a read tool, `llm` or a model name, a route) to implementations the agent's module
registers with `register_live(NAME)`; writes stay in the sandbox. `--repeat N` replays each case
N times and reports how often each case and each difference reproduces.

With `--public-key FILE` (or `GOLDEN_PUBLIC_KEY`) the version must be signed by that key,
whatever the store's `trusted_keys/` hold, and `latest` must not have been rolled back: an
unsigned, re-signed or edited version is refused with exit code 2 before any case is replayed.

Example:

    golden replay nightly@2026.12.01.1 --store ./golden-store \\
        --agent my_agent.main:run --out replay-out --gate configs/gate.yaml \\
        --results sqlite:///replay.db --new-version 2.4.0 --split regression --repeat 5

The agent is `MODULE:CALLABLE`, a function `agent(case, tools) -> AgentResult`
(see docs/consuming.md); `golden_distill.datasets.replay.agents:reissue` re-issues the recorded
calls (a harness check that must pass with zero diffs).
"""

EXPORT_HELP = """Export a golden set for other replay tools, one JSONL file per case.

`--format chronicle`: agent-chronicle 1.x tool envelopes (load them with
`agentplane_primitives.models.Envelope` and replay with `chronicle.replay(envelopes)`).
`--format chat-jsonl`: OpenAI-style transcripts with tool calls (the chat adapter reads them).

`--public-key FILE` (or `GOLDEN_PUBLIC_KEY`): refuse a version not signed by that key.

Example:

    golden export nightly@latest --store ./golden-store --format chronicle --out chronicle/
"""


FunnelOpt = Annotated[str | None, typer.Option("--funnel", help="Only the cases of this funnel.")]


def _usage(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def replay_cmd(
    ref: Annotated[str, typer.Argument(help="The version to replay: name@version or name@alias.")],
    agent: Annotated[str, typer.Option("--agent", help="The agent: MODULE:CALLABLE.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the results and report.")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    funnel: FunnelOpt = None,
    gate: Annotated[
        Path | None, typer.Option("--gate", help="Gate config (default: the shipped gate.yaml).")
    ] = None,
    results: Annotated[
        str | None,
        typer.Option("--results", help="Also append rows to sqlite:///x.db or postgresql://..."),
    ] = None,
    new_version: Annotated[
        str | None, typer.Option("--new-version", help="Label of the agent version under test.")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Worker processes.")] = 1,
    split: Annotated[
        str | None,
        typer.Option("--split", help="Only the cases of this split: dev, regression or holdout."),
    ] = None,
    public_key: PublicKeyOpt = None,
    live: Annotated[
        str | None,
        typer.Option("--live", help="Boundaries sent to registered implementations: NAME,..."),
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Replays per case.")] = 1,
    previous: Annotated[
        Path | None,
        typer.Option(
            "--previous",
            help="A previous replay's --out folder to compare with "
            "(default: OUT, when it holds a replay of the same set).",
        ),
    ] = None,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.replay.agent_call import AgentUsageError
    from golden_distill.datasets.replay.boundaries import LiveError, resolve_live
    from golden_distill.datasets.replay.config import SHIPPED_GATE, load_replay_config
    from golden_distill.datasets.replay.previous import compare, load_previous
    from golden_distill.datasets.replay.report import render_report, render_usage_error
    from golden_distill.datasets.replay.results import ResultsError, write_outputs, write_sql
    from golden_distill.datasets.replay.runner import AgentSpecError, load_agent, replay_cases
    from golden_distill.datasets.replay.selection import SelectionError, check_selection
    from golden_distill.datasets.sources.evidence_sql import redact_url, sql_dialect

    _check_split(split)
    if results and sql_dialect(results) is None:
        _usage(f"--results {redact_url(results)}: expected sqlite:///... or postgresql://...")
    fs = open_store(store, storage_options, None)
    config = guard(lambda: load_replay_config(gate or SHIPPED_GATE))
    live_names = [n.strip() for n in (live or "").split(",") if n.strip()]
    try:
        load_agent(agent)  # imports the agent's module: its register_live calls run
        resolve_live(live_names)
    except (AgentSpecError, LiveError) as exc:
        _usage(str(exc))
    keys = trusted_keys(public_key)
    golden = guard(lambda: open_ref(fs, ref, public_key=keys))
    try:
        check_selection(golden, funnel, split)
    except SelectionError as exc:
        _usage(f"--{exc}")
    total = _count(golden, funnel, split) * repeat
    baseline = f"{golden.name}@{golden.version}"
    before = load_previous(previous or out, baseline)

    def run() -> Any:
        # heavy: loaded when the command runs, not for `golden --help`
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(
            TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), transient=True
        ) as progress:
            task = progress.add_task("replay", total=total)
            return replay_cases(
                golden.cases(funnel=funnel, split=split),
                agent,
                config,
                baseline_version=baseline,
                new_version=new_version,
                volatile_keys=golden.volatile_keys,
                jobs=jobs,
                on_case=lambda _: progress.advance(task, repeat),
                live=live_names,
                repeat=repeat,
            )

    try:
        replay = guard(run)
    except AgentUsageError as exc:
        out.mkdir(parents=True, exist_ok=True)
        page = render_usage_error(baseline, str(exc), exc.traceback_text)
        (out / "report.html").write_text(page, encoding="utf-8")
        typer.echo(f"error: {exc}", err=True)
        if exc.traceback_text:
            typer.echo(exc.traceback_text.rstrip(), err=True)
        typer.echo(f"  report: {out / 'report.html'}", err=True)
        raise typer.Exit(2) from None
    if before is not None:
        replay.changes = compare(before, replay)
    write_outputs(replay, out)
    (out / "report.html").write_text(render_report(replay), encoding="utf-8")
    if results:
        try:
            write_sql(replay, results)
        except ResultsError as exc:
            _usage(str(exc))
    diffs = sum(len(r.check.diffs) for r in replay.runs)
    typer.echo(
        f"{baseline}: {len(replay.runs)} cases, {diffs} diffs, gate {replay.gate.verdict.upper()}"
    )
    for line in replay.gate.lines:
        if line.crossed:
            typer.echo(f"  {line.describe()}")
    if repeat > 1:
        flaky = [r for r in replay.runs if r.check.flaky]
        steady = sum(1 for r in replay.runs if r.check.reproduced == repeat)
        typer.echo(f"  {repeat} replays per case: {steady} case(s) as recorded in {repeat}/{repeat}"
                   f", {len(flaky)} flaky")  # fmt: skip
    if replay.changes is not None:
        changes = replay.changes
        typer.echo(f"  since {changes.previous.run_id}: {len(changes.new_cases)} case(s) newly "
                   f"with differences, {len(changes.fixed_cases)} fixed")  # fmt: skip
    typer.echo(f"  report: {out / 'report.html'}")
    raise typer.Exit(replay.exit_code)


def _check_split(split: str | None) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.replay.selection import SelectionError, check_selection

    try:
        check_selection(None, None, split)
    except SelectionError as exc:
        _usage(f"--{exc}")


def _count(golden: Any, funnel: str | None, split: str | None = None) -> int:
    if split is not None:  # the manifest counts no splits: count the split's rows
        return golden.read_table(funnel=funnel, split=split).num_rows
    if funnel is None:
        return len(golden)
    return golden.manifest["counts"].get("per_funnel", {}).get(funnel, 0)


def export_cmd(
    ref: Annotated[str, typer.Argument(help="The version: name@version or name@alias.")],
    fmt: Annotated[str, typer.Option("--format", help="chronicle | chat-jsonl")],
    out: Annotated[Path, typer.Option("--out", help="Folder: one <case_id>.jsonl per case.")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    funnel: FunnelOpt = None,
    public_key: PublicKeyOpt = None,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.replay.export import FORMATS, export_cases

    if fmt not in FORMATS:
        _usage(f"--format {fmt!r}: one of {', '.join(FORMATS)}")
    fs = open_store(store, storage_options, None)
    keys = trusted_keys(public_key)
    golden = guard(lambda: open_ref(fs, ref, public_key=keys))
    written = guard(lambda: sum(1 for _ in export_cases(golden.cases(funnel=funnel), fmt, out)))
    typer.echo(f"{golden.name}@{golden.version}: {written} cases written to {out} ({fmt})")


def register(app: typer.Typer) -> None:
    app.command("replay", help=REPLAY_HELP)(replay_cmd)
    app.command("export", help=EXPORT_HELP)(export_cmd)
