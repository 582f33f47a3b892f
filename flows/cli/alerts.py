"""`golden alerts apply`: the repository's alert automations, applied to the Prefect API."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HELP = """Apply the alert automations declared in configs/alerts.yaml to the Prefect API.

A failed, crashed or timed-out `distill` run, a late run no worker starts within 10 minutes and
26 hours without a completed run then post a subject and body to the webhook
in GOLDEN_ALERT_WEBHOOK_URL (saved as the `golden-nightly-alert` block; never in the repo).
Idempotent: rerun after editing the file.

Example:

    export PREFECT_API_URL=http://127.0.0.1:4200/api
    GOLDEN_ALERT_WEBHOOK_URL=https://hooks.example.com/T000/B000 golden alerts apply
"""

alerts_app = typer.Typer(help="Alerts as code (Prefect automations + a webhook block).")


@alerts_app.command("apply", help=HELP)
def apply_command(
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="Automations YAML (default: shipped).")
    ] = None,
) -> None:
    # heavy (Prefect): loaded when the command runs, not for `golden --help`
    from golden_distill.flows.alerts import ALERTS_PATH, AlertsError, apply_alerts

    try:
        applied = apply_alerts(file or ALERTS_PATH)
    except AlertsError as exc:
        typer.echo(f"golden alerts apply: {exc}", err=True)
        raise typer.Exit(2) from None
    for item in applied:
        typer.echo(f"automation {item['name']}: {item['id']}")


def register(app: typer.Typer) -> None:
    app.add_typer(alerts_app, name="alerts")
