"""`golden fields`: the field inventory of a published version, and config lines to add."""

from __future__ import annotations

from typing import Annotated

import typer

FIELDS_HELP = """Print how each tool's JSON paths were handled by redaction in a published version.

For every tool and path: how many leaves a rule owned (rule, key_field, evidence,
non_personal, verbatim), how many were scanned or pseudonymised as unknown identifiers, which
entity types the scanner found there and what the verifier found (counts, never values). Paths
first seen in that version are marked `new`. Ends with proposed `redaction.sensitive_keys` lines
for paths no rule owns where personal data was found.

Example:

    golden fields --store ./golden-store --set nightly
    golden fields --store ./golden-store --set nightly@2026.11.30.1 --only-findings
"""


def fields_command(
    store: Annotated[str, typer.Option(help="Golden store folder or URL.")],
    set_ref: Annotated[
        str, typer.Option("--set", help="Set name, optionally @version or @alias (default latest).")
    ],
    only_findings: Annotated[
        bool, typer.Option(help="Only paths where something was found.")
    ] = False,
) -> None:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.reader import VersionNotFound, open_set
    from golden_distill.redaction.inventory import new_paths, proposals

    ref = set_ref if "@" in set_ref else f"{set_ref}@latest"
    try:
        version = open_set(store, ref)
    except (VersionNotFound, FileNotFoundError) as exc:
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    nested = (version.manifest.get("redaction") or {}).get("fields") or {}
    if not nested:
        typer.echo(f"{version.version}: no field inventory recorded (made before it existed)")
        raise typer.Exit(0)
    parent = None
    parent_ref = version.manifest.get("parent_version")
    if isinstance(parent_ref, str) and parent_ref:
        try:
            parent_manifest = open_set(store, f"{ref.split('@')[0]}@{parent_ref}").manifest
            parent = (parent_manifest.get("redaction") or {}).get("fields") or {}
        except Exception:
            parent = None
    new = set(new_paths(nested, parent)) if parent is not None else set()
    typer.echo(f"field inventory of {version.version} (counts per tool and path)")
    for tool, paths in nested.items():
        lines = []
        for path, kinds in paths.items():
            found = any(k.startswith(("found:", "verifier:")) for k in kinds)
            if only_findings and not found:
                continue
            mark = " new" if f"{tool} {path}" in new else ""
            text = ", ".join(f"{k} {n}" for k, n in kinds.items())
            lines.append(f"  {path}{mark}: {text}")
        if lines:
            typer.echo(tool)
            for line in lines:
                typer.echo(line)
    lines = proposals(nested)
    if lines:
        typer.echo("\nproposed config (paths no rule owns where personal data was found):")
        typer.echo("redaction:\n  sensitive_keys:")
        for line in lines:
            typer.echo(line)
    else:
        typer.echo("\nno unclassified path with findings: nothing to propose")


def register(app: typer.Typer) -> None:
    app.command("fields", help=FIELDS_HELP)(fields_command)
