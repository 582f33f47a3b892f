"""`golden run`: the nightly job, run here and now (no Prefect server to install)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from golden_distill.datasets.quarantine import quarantine_hint
from golden_distill.flows import progress
from golden_distill.flows.cli.run_options import with_run_options
from golden_distill.flows.errors import StageError, describe, find_stage_error
from golden_distill.flows.params import DistillParams

HELP = """Run the whole pipeline once: read -> funnels -> quotas + dedup -> redact -> publish.

Runs the `distill` Prefect flow in this process against a temporary local Prefect API (nothing
to install or start). Shows shards done and cases selected so far; prints the published version
and where its report is. On failure it names the stage that failed and exits non-zero; a run
that reads no case (empty input, or every record quarantined: a wrong `--format` is stopped
early with a hint), selects nothing, or meets two different records under one case id fails
too, and publishes nothing.

Example:

    golden run --config configs/nightly.yaml --source recordings/ --store ./store --set nightly

Date-templated sources read the partitions of the window only:

    golden run --source 'recordings/dt={date}/' --since 2026-11-28 --until 2026-11-29

With a window, the new version grows the set's latest one (its cases still inside
`selection.max_age_days` plus this window's new representatives); `--rebuild` starts over.
Small runs by hand: `--local` runs the same steps in this process without Prefect's
temporary API (its start-up dominates a run of a few hundred sessions).
Unchanged shards are reused from the cache (work dir `run.work_dir`); with nothing changed
the latest version is reported instead of publishing a copy (`--force` publishes). Scale out
with `--dask-address tcp://scheduler:8786`.
"""


def _quiet_prefect(verbose: bool) -> None:
    """Prefect's per-task lines would scroll over the progress line, and a failure is reported
    once, by stage, at the end: Prefect's own output only with --verbose."""
    if not verbose:
        # worker processes (process pool, private Dask cluster) read it from the environment
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
        for name in ("prefect.flow_runs", "prefect.task_runs"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        for name in ("prefect", "distributed"):
            logging.getLogger(name).setLevel(logging.WARNING)


class _Display:
    """A one-line progress display fed by the flow's progress events (counts only)."""

    def __init__(self) -> None:

        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description:7s}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[note]}"),
            console=self.console,
            transient=False,
        )
        self.task_id: Any = None
        self.redact_id: Any = None
        self.keys_id: Any = None
        self.cached = 0
        self.published: dict[str, Any] = {}

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        if event == "shards_planned":
            self.progress.start()
            self.task_id = self.progress.add_task("shards", total=data["total"], note="")
            self.redact_id = None
            self.keys_id = None
        elif event == "shard_done" and self.task_id is not None:
            self.cached += bool(data.get("cached"))
            note = f"{data['selected']:,} cases selected so far"
            if self.cached:
                note += f" ({self.cached} shard(s) from cache)"
            self.progress.update(self.task_id, completed=data["done"], note=note)
        elif event == "selected":
            self.progress.console.print(
                f"after dedup and quotas: {data['selected']:,} cases selected "
                "(before redaction, which may refuse some)"
            )
        elif event == "keys_done":  # the key pass before redaction (flows/tasks/keys.py)
            if self.keys_id is None:
                self.keys_id = self.progress.add_task("keys", total=data["total"], note="")
            note = "original keys listed (collision check)"
            self.progress.update(
                self.keys_id, completed=data["done"], total=data["total"], note=note
            )
        elif event == "redact_done":
            if self.redact_id is None:
                self.redact_id = self.progress.add_task("redact", total=data["total"], note="")
            note = f"{data['selected']:,} cases redacted"
            self.progress.update(
                self.redact_id, completed=data["done"], total=data["total"], note=note
            )
        elif event == "published":
            self.published = data
            quarantined = data.get("quarantined") or {}
            if quarantined and not data.get("reused"):
                counts = "; ".join(f"{k} {v:,}" for k, v in sorted(quarantined.items()))
                self.progress.console.print(f"quarantined while reading: {counts}")
                for reason in sorted(quarantined):
                    hint = quarantine_hint(reason)
                    if hint:
                        self.progress.console.print(f"  hint ({reason}): {hint}")

    def stop(self) -> None:
        self.progress.stop()


@with_run_options
def run_command(
    *,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Lighter mode for small runs: the same steps in this process, without "
            "Prefect's API (no Prefect cache, retries, artifacts or UI runs).",
        ),
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's logs.")] = False,
    **values: Any,
) -> None:
    """``values``: the run's parameters by field name (flows/cli/run_options.py)."""
    from golden_distill.flows.memory import eager_release_here

    eager_release_here()  # before anything loads polars
    try:
        params = DistillParams.from_flow(values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors()
        )
        typer.echo(f"golden run failed in stage 'validate': {problems}", err=True)
        raise typer.Exit(2) from None
    from golden_distill.flows.flow_limits import FlowLimitsError, flow_limits

    try:  # read when the flow is defined: a bad value is a usage error, not a traceback
        flow_limits()
    except FlowLimitsError as exc:
        typer.echo(f"golden run failed in stage 'validate': {exc}", err=True)
        raise typer.Exit(2) from None
    outcome = execute(params, verbose=verbose, local=local)
    if isinstance(outcome, BaseException):
        stage_error = find_stage_error(outcome)
        if stage_error is None:  # only the documented stage names (errors.STAGES) are printed
            typer.echo(f"golden run failed: {describe(outcome)}", err=True)
        else:
            typer.echo(
                f"golden run failed in stage '{stage_error.stage}': {stage_error.detail}", err=True
            )
            if stage_error.stage == "validate":  # config, parameters, key, store: a usage error
                raise typer.Exit(2)
        raise typer.Exit(1)
    version, report, reused, why, counts = outcome
    if reused:
        typer.echo(f"nothing new to publish: the latest version {version} stands ({why})")
    if counts.get("cases") is not None:
        typer.echo(f"{'cases in it' if reused else 'published'}: {counts['cases']:,} cases")
    if counts.get("refusals") and not reused:
        # polars: loaded once a run is done, not for `golden --help`
        from golden_distill.filters.refusal_accounting import describe as describe_refusals

        typer.echo(describe_refusals(counts["refusals"]))
    typer.echo(f"published version: {version}")
    typer.echo(f"report: {report}")


def _boot_api_in_background() -> threading.Thread | None:
    """Start Prefect's temporary API server while the pipeline's modules import (seconds saved
    on every run: the server boots in its own process). Nothing to do when an API is set."""
    # heavy (Prefect): loaded when a run starts, not for `golden --help`
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None

    def boot() -> None:
        # heavy (Prefect's server), imported in the boot thread, in parallel with the pipeline
        from golden_distill.flows.prefect_db import start_temporary_api

        with contextlib.suppress(Exception):  # if it fails, the flow starts it and reports why
            start_temporary_api()

    thread = threading.Thread(target=boot, name="prefect-api-boot", daemon=True)
    thread.start()
    return thread


def execute(
    params: Any, *, verbose: bool = False, local: bool = False
) -> tuple[str, str, bool, str, dict[str, Any]] | BaseException:
    """Run the flow with a progress display: (version, report path, reused, why it was reused,
    counts: ``cases`` published and the ``refusals`` accounting, when known) or the exception.

    Everything that can be checked without Prefect is checked first (flows/preflight.py): a
    bad config, key, source, store or set name fails in about a second, with its message and
    no Prefect output. An unchanged rerun (same shards, config, set, key and code as the set's
    latest version) is answered then too: booting Prefect's temporary API was most of its time.
    The API boots in the background while new input files are hashed (once every check has
    passed) and the flow's modules import.
    """
    # heavy (polars, scikit-learn, Presidio): loaded when a run starts, not for `golden --help`
    from golden_distill.flows.preflight import preflight
    from golden_distill.flows.run_key import unchanged_latest

    booting: list[threading.Thread | None] = []

    def boot() -> None:
        """Once: quiet Prefect, then boot its API in the background (not in --local)."""
        if not booting:
            _quiet_prefect(verbose)
            booting.append(None if local else _boot_api_in_background())

    try:  # the API boots while the night's new files are hashed (checks passed by then)
        prepared = preflight(params, before_hashing=boot)
    except StageError as exc:
        return exc
    unchanged = unchanged_latest(prepared)
    if unchanged is not None:
        why = (
            "same run key: the sources, config, set, pseudonym key and code are unchanged "
            "since it was published"
        )
        return unchanged[0], unchanged[1], True, why, {}
    boot()
    # imported after the API boot started, so the two overlap
    from golden_distill.flows.distill import run_distill

    if booting[0] is not None:
        booting[0].join()
    display = _Display()
    try:
        with progress.listening(display):
            version = run_distill(params, local=local)
    except Exception as exc:
        display.stop()
        return exc
    display.stop()
    published = display.published
    why = published.get("why") or "nothing changed"
    counts = {"cases": published.get("cases"), "refusals": published.get("refusals")}
    report = str(published.get("report", ""))
    return version, report, bool(published.get("reused")), str(why), counts


def register(app: typer.Typer) -> None:
    app.command("run", help=HELP)(run_command)
