"""`golden sets`: inspect, compare, verify, promote and clean up published golden-set versions."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from golden_distill.datasets.store.aliases import list_aliases
from golden_distill.datasets.store.layout import SetLayout, parse_ref
from golden_distill.flows.cli.set_changes import gc_cmd, promote_cmd
from golden_distill.flows.cli.store_access import (
    ConfigOpt,
    JsonOpt,
    OptionsOpt,
    PublicKeyOpt,
    StoreOpt,
    guard,
    open_ref,
    open_store,
    trusted_keys,
)
from golden_distill.flows.cli.strength import register as register_strength

HELP = """Inspect and manage published golden sets (immutable versions in a store).

The store is a local folder or an fsspec URL (s3://bucket/prefix). It comes from `--store`, else
`GOLDEN_STORE`, else `publish.store_url` of `--config`. S3 credentials come from the usual AWS
environment variables; extra client options (an endpoint URL...) from `--storage-options` JSON.

Examples:

    golden sets list --store ./golden-store
    golden sets show nightly@latest
    golden sets show nightly@latest --case c_3fb351ff6cecbf40f18aed03
    golden sets why c_3fb351ff6cecbf40f18aed03 --set nightly      # in, out, when and why
    golden sets diff nightly@2026.11.28.1 nightly@latest
    golden sets verify nightly@stable
    golden sets verify nightly@stable --public-key signer.pub.pem   # must be signed by it
    golden sets promote nightly@2026.11.29.1 stable
    golden sets gc nightly --keep-last 5 --keep-days 14          # dry run: shows the plan
    golden sets gc nightly --keep-last 5 --keep-days 14 --apply
    golden sets strength nightly@latest                          # share of mutants it kills
    GOLDEN_PSEUDONYM_KEY=... golden sets lookup nightly@latest --trace <production trace id>
"""


def list_cmd(
    name: Annotated[str | None, typer.Argument(help="A set: list its versions.")] = None,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the sets in a store, or the versions of one set with their aliases.

    Example: `golden sets list nightly --store s3://bucket/golden`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.versions import list_sets, list_versions, read_manifest

    fs = open_store(store, storage_options, config)

    def run() -> None:
        if name is None:
            sets = list_sets(fs)
            typer.echo(json.dumps(sets) if as_json else "\n".join(sets) or "(no sets)")
            return
        aliases: dict[str, list[str]] = {}
        for alias, version in list_aliases(fs, SetLayout(name)).items():
            aliases.setdefault(version, []).append(alias)
        rows = []
        for version in list_versions(fs, name):
            manifest = read_manifest(fs, name, version)
            rows.append(
                {
                    "version": version,
                    "created_at": manifest["created_at"],
                    "cases": manifest["counts"].get("cases"),
                    "aliases": sorted(aliases.get(version, [])),
                }
            )
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        if not rows:
            typer.echo(f"{name}: no published versions")
        for row in rows:
            tags = f"  [{', '.join(row['aliases'])}]" if row["aliases"] else ""
            typer.echo(f"{row['version']:<16} {row['created_at']}  {row['cases']:>8} cases{tags}")

    guard(run)


def show_cmd(
    ref: Annotated[str, typer.Argument(help="NAME@VERSION or NAME@ALIAS.")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    public_key: PublicKeyOpt = None,
    case: Annotated[
        str | None,
        typer.Option("--case", help="Show one case: its reasons, cluster and history."),
    ] = None,
) -> None:
    """Show a version's manifest: signature (signed? by which key id?), counts per funnel,
    files, config hash. It does not check the files: `golden sets verify` does. With
    `--case ID`: why that case is in the version or not (any case the run read: no funnel,
    dedup, quota, redaction, review), its cluster and its history across versions.

    Example: `golden sets show nightly@latest --case c_3fb351ff6cecbf40f18aed03`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.integrity import describe_signature
    from golden_distill.datasets.store.layout import parse_ref
    from golden_distill.datasets.store.versions import read_manifest, resolve

    fs = open_store(store, storage_options, config)
    if case is not None:
        # heavy: loaded when the command runs, not for `golden --help`
        from golden_distill.flows.cli.case_history import case_report, render_case

        keys = trusted_keys(public_key)
        golden = guard(lambda: open_ref(fs, ref, verify=False, public_key=keys))

        def at(other: str) -> Any:
            return open_ref(fs, f"{golden.name}@{other}", verify=False, public_key=keys)

        report = guard(lambda: case_report(fs, golden, case, at))
        typer.echo(json.dumps(report, indent=2, default=str) if as_json else render_case(report))
        return
    parsed = guard(lambda: parse_ref(ref))
    version = guard(lambda: resolve(fs, parsed))
    manifest = guard(lambda: read_manifest(fs, parsed.set_name, version))
    if as_json:  # exactly the manifest (the signature is a separate file: manifest.sig)
        typer.echo(json.dumps(manifest, indent=2, sort_keys=True))
        return
    signature = guard(
        lambda: describe_signature(fs, parsed.set_name, version, trusted_keys(public_key))
    )
    counts = manifest["counts"]
    typer.echo(
        f"{parsed.set_name}@{version}  (parent {manifest.get('parent_version')}, "
        f"sequence {manifest.get('sequence')})"
    )
    typer.echo(f"signature      {signature}")
    typer.echo(f"created_at     {manifest['created_at']}")
    typer.echo(f"window         {describe_window(manifest.get('lineage') or {})}")
    typer.echo(f"code_version   {manifest.get('code_version')}")
    typer.echo(f"config_sha256  {manifest.get('config_sha256')}")
    typer.echo(f"key_id         {manifest.get('key_id')}")
    typer.echo(f"cases          {counts.get('cases')}  steps {counts.get('steps')}")
    for funnel, count in counts.get("per_funnel", {}).items():
        typer.echo(f"  {funnel:<22} {count}")
    typer.echo("files")
    for entry in manifest["files"]:
        typer.echo(f"  {entry['name']:<22} {entry['size']:>12} B  sha256 {entry['sha256'][:16]}…")


def why_cmd(
    case: Annotated[str, typer.Argument(help="A case id, as published (c_...).")],
    set_name: Annotated[
        str | None,
        typer.Option("--set", help="The set (default: every set of the store that knows it)."),
    ] = None,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    public_key: PublicKeyOpt = None,
) -> None:
    """Why a case is in a set or not, version by version: published, or the decision that
    kept it out (no_funnel, gate, dedup and the member published in its place, quota,
    redaction's refusal, review rejection with the reviewer's reason), when it was first
    published and when it left and why. Read from each version's decisions table.

    Example: `golden sets why c_3fb351ff6cecbf40f18aed03 --set nightly`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.layout import check_set_name
    from golden_distill.datasets.store.versions import list_sets
    from golden_distill.flows.cli.case_history import render_why, why_report

    fs = open_store(store, storage_options, config)
    keys = trusted_keys(public_key)
    if set_name is not None:
        guard(lambda: check_set_name(set_name))
    names = [set_name] if set_name is not None else guard(lambda: list_sets(fs))
    if not names:
        typer.echo("error: the store holds no set", err=True)
        raise typer.Exit(2)

    def report_of(name: str) -> dict[str, Any]:
        def at(version: str) -> Any:
            return open_ref(fs, f"{name}@{version}", verify=True, public_key=keys)

        return why_report(fs, name, case, at)

    reports = [guard(lambda n=n: report_of(n)) for n in names]
    known = [r for r in reports if r["known"]] or reports[:1]
    if as_json:
        typer.echo(json.dumps(known if set_name is None else known[0], indent=2, default=str))
        return
    typer.echo("\n\n".join(render_why(r) for r in known))


def describe_window(lineage: dict[str, Any]) -> str:
    """The recording window ``[since, until)`` this version read (the next scheduled run
    starts at ``until``), and the version it grew from."""
    since, until = lineage.get("since"), lineage.get("until")
    if since is None and until is None:
        text = "all recordings of its sources (no since/until)"
    else:
        text = f"{since or 'the beginning'} .. {until or 'now'} (recorded_at, until exclusive)"
    parent = lineage.get("parent_version")
    return f"{text}; grown from {parent}" if parent else text


def diff_cmd(
    a: Annotated[str, typer.Argument(help="The older version: NAME@VERSION|ALIAS.")],
    b: Annotated[str, typer.Argument(help="The newer version: NAME@VERSION|ALIAS.")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    fmt: Annotated[str, typer.Option("--format", help="text, json or markdown.")] = "text",
    limit: Annotated[int, typer.Option(help="Cases shown per list.")] = 20,
    public_key: PublicKeyOpt = None,
) -> None:
    """Compare two versions: cases added, removed and changed (what changed, before and after:
    funnels, reasons, score, cluster, split, trust, outcome, expected outcome), the config diff,
    and drift (funnel mix, tools, write actions, tenants, outcomes, entity types; largest shifts
    first). A case whose content is unchanged is not "changed" because its recording moved.

    Example: `golden sets diff nightly@stable nightly@latest --format markdown`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.cli.set_diff import diff_report, render_markdown, render_text

    if as_json:
        fmt = "json"
    if fmt not in ("text", "json", "markdown"):
        raise typer.BadParameter("one of text, json, markdown", param_hint="--format")
    fs = open_store(store, storage_options, config)
    keys = trusted_keys(public_key)
    report = guard(
        lambda: diff_report(open_ref(fs, a, public_key=keys), open_ref(fs, b, public_key=keys))
    )
    if fmt == "json":
        typer.echo(json.dumps(report, indent=2, default=str))
    elif fmt == "markdown":
        typer.echo(render_markdown(report, limit))
    else:
        typer.echo(render_text(report, limit))


def verify_cmd(
    ref: Annotated[str, typer.Argument(help="NAME@VERSION or NAME@ALIAS (NAME: latest).")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
    replay: Annotated[bool, typer.Option(help="Also run the replay completeness check.")] = True,
    public_key: PublicKeyOpt = None,
) -> None:
    """Check the signature and the manifest, recompute every checksum, row count and count, and
    run the replay check; exit 1 on any problem.

    Each problem is printed naming the version and the file. With `--public-key FILE` (or
    `GOLDEN_PUBLIC_KEY`, or a store holding `trusted_keys/`) an unsigned version or any edit is
    refused; with a pinned key an alias pointing outside the signed history (a rollback of
    `latest`, a fork) fails too. A file in the version folder the manifest does not list fails.
    Example: `golden sets verify nightly@latest --public-key signer.pub.pem`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.history import HistoryError, check_in_history
    from golden_distill.datasets.store.verify import verify_version
    from golden_distill.datasets.store.versions import resolve

    fs = open_store(store, storage_options, config)
    keys = trusted_keys(public_key)
    parsed = guard(lambda: parse_ref(ref))
    version = guard(lambda: resolve(fs, parsed))
    history: list[str] = []
    if keys:  # an alias must point into the signed history; no withdrawn version is back
        try:
            check_in_history(fs, parsed, version, keys)
        except HistoryError as exc:
            history.append(str(exc))
    report = guard(
        lambda: verify_version(fs, parsed.set_name, version, replay=replay, public_keys=keys)
    )
    for line in history + report.lines():
        typer.echo(f"FAIL {line}", err=True)
    if history or not report.ok:
        raise typer.Exit(1)
    summary = report.replay_check.summary() if report.replay_check else {}
    typer.echo(
        f"OK {parsed.set_name}@{version}: {report.files_checked} files verified"
        + (f", replay check {summary['steps_checked']} steps" if summary else "")
        + (f", signed by {report.signed_by}" if report.signed_by else ", signature not required")
    )


def register(app: typer.Typer) -> None:
    sets = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode="markdown")
    sets.command("list")(list_cmd)
    sets.command("show")(show_cmd)
    sets.command("why")(why_cmd)
    sets.command("diff")(diff_cmd)
    sets.command("verify")(verify_cmd)
    sets.command("promote")(promote_cmd)
    sets.command("gc")(gc_cmd)
    register_strength(sets)
    app.add_typer(sets, name="sets")
