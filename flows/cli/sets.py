"""`golden sets`: inspect, compare, verify, promote and clean up published golden-set versions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from golden_distill.datasets.config_model import ConfigError
from golden_distill.datasets.publish_config import PublishConfig
from golden_distill.datasets.store.aliases import list_aliases, move_alias
from golden_distill.datasets.store.fs import StoreError, StoreFS
from golden_distill.datasets.store.layout import LayoutError, SetLayout, check_alias, parse_ref

HELP = """Inspect and manage published golden sets (immutable versions in a store).

The store is a local folder or an fsspec URL (s3://bucket/prefix). It comes from `--store`, else
`GOLDEN_STORE`, else `publish.store_url` of `--config`. S3 credentials come from the usual AWS
environment variables; extra client options (an endpoint URL...) from `--storage-options` JSON.

Examples:

    golden sets list --store ./golden-store
    golden sets show nightly@latest
    golden sets diff nightly@2026.11.28.1 nightly@latest
    golden sets verify nightly@stable
    golden sets verify nightly@stable --public-key signer.pub.pem   # must be signed by it
    golden sets promote nightly@2026.11.29.1 stable
    golden sets gc nightly --keep-last 5 --keep-days 14          # dry run: shows the plan
    golden sets gc nightly --keep-last 5 --keep-days 14 --apply
"""

T = TypeVar("T")

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", envvar="GOLDEN_STORE", help="Store URL (folder, s3://...)."),
]
OptionsOpt = Annotated[
    str | None,
    typer.Option(
        "--storage-options",
        envvar="GOLDEN_STORAGE_OPTIONS",
        help='fsspec options as JSON, e.g. \'{"client_kwargs": {"endpoint_url": "..."}}\'.',
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="Pipeline config whose `publish:` section gives defaults."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
PublicKeyOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--public-key",
        help="Ed25519 public key (PEM) the version must be signed by; repeatable. "
        "Default: the store's trusted_keys/ (none there: signatures are not required).",
    ),
]


def _publish_config(config: Path | None) -> Any:

    if config is None:
        return PublishConfig()
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config

    return load_pipeline_config(config).publish


def _store(store: str | None, options: str | None, config: Path | None) -> Any:

    cfg = _publish_config(config)
    storage_options = dict(cfg.storage_options)
    if options:
        try:
            extra = json.loads(options)
        except json.JSONDecodeError:
            raise typer.BadParameter("not valid JSON", param_hint="--storage-options") from None
        storage_options.update(extra)
    return StoreFS(store or cfg.store_url, storage_options)


def _guard(action: Callable[[], T]) -> T:
    """Run ``action``; expected errors become one clear line and exit code 2."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.manifest import ManifestError
    from golden_distill.datasets.store.verify import ChecksumError
    from golden_distill.datasets.store.versions import VersionNotFound

    expected = (
        ConfigError,
        StoreError,
        LayoutError,
        ManifestError,
        ChecksumError,
        VersionNotFound,
        KeyError,
        FileNotFoundError,
    )
    try:
        return action()
    except expected as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(2) from None


def _open(store: Any, ref: str, verify: bool = True, public_key: list[Path] | None = None) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.reader import GoldenSet
    from golden_distill.datasets.store.versions import resolve

    parsed = parse_ref(ref)
    return GoldenSet(
        store, parsed.set_name, resolve(store, parsed), verify=verify, public_keys=public_key
    )


def _keys(public_key: list[Path] | None) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.signing import public_keys_from

    return _guard(lambda: public_keys_from(public_key or None))


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

    fs = _store(store, storage_options, config)

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

    _guard(run)


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
    `--case ID`: why that case is in the version, its cluster and its history across versions.

    Example: `golden sets show nightly@latest --case c_3fb351ff6cecbf40f18aed03`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.integrity import describe_signature
    from golden_distill.datasets.store.layout import parse_ref
    from golden_distill.datasets.store.versions import read_manifest, resolve

    fs = _store(store, storage_options, config)
    if case is not None:
        # heavy: loaded when the command runs, not for `golden --help`
        from golden_distill.flows.cli.case_history import case_report, render_case

        keys = _keys(public_key)
        golden = _guard(lambda: _open(fs, ref, verify=False, public_key=keys))

        def at(other: str) -> Any:
            return _open(fs, f"{golden.name}@{other}", verify=False, public_key=keys)

        report = _guard(lambda: case_report(fs, golden, case, at))
        typer.echo(json.dumps(report, indent=2, default=str) if as_json else render_case(report))
        return
    parsed = _guard(lambda: parse_ref(ref))
    version = _guard(lambda: resolve(fs, parsed))
    manifest = _guard(lambda: read_manifest(fs, parsed.set_name, version))
    if as_json:  # exactly the manifest (the signature is a separate file: manifest.sig)
        typer.echo(json.dumps(manifest, indent=2, sort_keys=True))
        return
    signature = _guard(lambda: describe_signature(fs, parsed.set_name, version, _keys(public_key)))
    counts = manifest["counts"]
    typer.echo(f"{parsed.set_name}@{version}  (parent {manifest.get('parent_version')})")
    typer.echo(f"signature      {signature}")
    typer.echo(f"created_at     {manifest['created_at']}")
    typer.echo(f"code_version   {manifest.get('code_version')}")
    typer.echo(f"config_sha256  {manifest.get('config_sha256')}")
    typer.echo(f"key_id         {manifest.get('key_id')}")
    typer.echo(f"cases          {counts.get('cases')}  steps {counts.get('steps')}")
    for funnel, count in counts.get("per_funnel", {}).items():
        typer.echo(f"  {funnel:<22} {count}")
    typer.echo("files")
    for entry in manifest["files"]:
        typer.echo(f"  {entry['name']:<22} {entry['size']:>12} B  sha256 {entry['sha256'][:16]}…")


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
    fs = _store(store, storage_options, config)
    keys = _keys(public_key)
    report = _guard(
        lambda: diff_report(_open(fs, a, public_key=keys), _open(fs, b, public_key=keys))
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

    Each problem is printed naming the version and the file. With `--public-key FILE` (or a
    store holding `trusted_keys/`) an unsigned version or any edit is refused.
    Example: `golden sets verify nightly@latest --public-key signer.pub.pem`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.verify import verify_version
    from golden_distill.datasets.store.versions import resolve

    fs = _store(store, storage_options, config)
    parsed = _guard(lambda: parse_ref(ref))
    version = _guard(lambda: resolve(fs, parsed))
    keys = _keys(public_key)
    report = _guard(
        lambda: verify_version(fs, parsed.set_name, version, replay=replay, public_keys=keys)
    )
    for line in report.lines():
        typer.echo(f"FAIL {line}", err=True)
    if not report.ok:
        raise typer.Exit(1)
    summary = report.replay_check.summary() if report.replay_check else {}
    typer.echo(
        f"OK {parsed.set_name}@{version}: {report.files_checked} files verified"
        + (f", replay check {summary['steps_checked']} steps" if summary else "")
        + (f", signed by {report.signed_by}" if report.signed_by else ", signature not required")
    )


def promote_cmd(
    ref: Annotated[str, typer.Argument(help="The version to point at: NAME@VERSION|ALIAS.")],
    alias: Annotated[str, typer.Argument(help="The alias to move, e.g. stable, candidate.")],
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
    min_trust: Annotated[
        str | None,
        typer.Option(
            "--min-trust",
            help="Refuse when a case of the regression split is less trusted than this "
            "(unconfirmed < oracle < human).",
        ),
    ] = None,
    public_key: PublicKeyOpt = None,
) -> None:
    """Point an alias at a version (atomically). The version must be published and verify
    (signature included, when a public key is given or the store has trusted_keys/).

    Example: `golden sets promote nightly@2026.11.29.1 stable --min-trust oracle`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.trust import RANK

    if min_trust is not None and min_trust not in RANK:
        raise typer.BadParameter(f"one of {', '.join(RANK)}", param_hint="--min-trust")
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.layout import SetLayout, parse_ref
    from golden_distill.datasets.store.verify import verify_version
    from golden_distill.datasets.store.versions import resolve

    fs = _store(store, storage_options, config)
    parsed = _guard(lambda: parse_ref(ref))
    _guard(lambda: check_alias(alias))
    version = _guard(lambda: resolve(fs, parsed))
    keys = _keys(public_key)
    report = _guard(
        lambda: verify_version(fs, parsed.set_name, version, replay=False, public_keys=keys)
    )
    if not report.ok:
        for line in report.lines():
            typer.echo(f"FAIL {line}", err=True)
        raise typer.Exit(1)
    if min_trust is not None:
        golden = _guard(lambda: _open(fs, ref, public_key=keys))
        weak = _weaker_regression_cases(golden, min_trust)
        if weak:
            typer.echo(
                f"refused: {len(weak)} case(s) of the regression split are trusted less than "
                f"{min_trust}, e.g. {', '.join(weak[:5])}; confirm them (golden review) or "
                "move them out of regression",
                err=True,
            )
            raise typer.Exit(1)
    old, new = _guard(lambda: move_alias(fs, SetLayout(parsed.set_name), alias, version))
    typer.echo(f"{parsed.set_name}@{alias}: {old or '(none)'} -> {new}")


def _weaker_regression_cases(golden: Any, minimum: str) -> list[str]:
    """Ids of regression-split cases trusted less than ``minimum`` (a version without splits:
    every case counts as regression and unconfirmed)."""
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.trust import at_least

    frame = pl.from_arrow(golden.read_table())
    assert isinstance(frame, pl.DataFrame)
    split = pl.col("split") if "split" in frame.columns else pl.lit(None, dtype=pl.String)
    trust = pl.col("trust") if "trust" in frame.columns else pl.lit(None, dtype=pl.String)
    weak = frame.filter(
        split.fill_null("regression").eq("regression")
        & ~at_least(trust.fill_null("unconfirmed"), minimum)
    )
    return sorted(weak.get_column("case_id").to_list())


def gc_cmd(
    name: Annotated[str, typer.Argument(help="The set to clean up.")],
    keep_last: Annotated[int | None, typer.Option(help="Keep the newest N versions.")] = None,
    keep_days: Annotated[float | None, typer.Option(help="Keep versions younger than D.")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Delete (default: dry run).")] = False,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Delete old versions (never one an alias points to). Dry run unless --apply.

    Keeps the newest N and those younger than D days (defaults: `publish.retention`), and
    removes leftovers of publishers that died. Example: `golden sets gc nightly --keep-last 5`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.gc import apply_gc, plan_gc

    cfg = _publish_config(config).retention
    fs = _store(store, storage_options, config)
    plan = _guard(
        lambda: plan_gc(
            fs,
            name,
            keep_last=cfg.keep_last if keep_last is None else keep_last,
            keep_days=cfg.keep_days if keep_days is None else keep_days,
            orphan_grace_hours=cfg.orphan_grace_hours,
        )
    )
    if apply:
        plan = _guard(lambda: apply_gc(fs, plan))
    verb = "deleted" if apply else "would delete"
    for version, why in plan.keep.items():
        typer.echo(f"keep    {version}  ({why})")
    for version in plan.delete:
        typer.echo(f"{verb:<7} {version}")
    for rel in plan.orphans:
        typer.echo(f"{verb:<7} leftover {rel}")
    if not apply and (plan.delete or plan.orphans):
        typer.echo("dry run: nothing deleted; add --apply to delete")


def register(app: typer.Typer) -> None:
    sets = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode="markdown")
    sets.command("list")(list_cmd)
    sets.command("show")(show_cmd)
    sets.command("diff")(diff_cmd)
    sets.command("verify")(verify_cmd)
    sets.command("promote")(promote_cmd)
    sets.command("gc")(gc_cmd)
    app.add_typer(sets, name="sets")
