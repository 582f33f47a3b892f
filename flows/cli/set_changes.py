"""`golden sets promote` and `golden sets gc`: the commands that change a store (an alias moved,
old versions deleted); the read-only ones are in sets.py."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from golden_distill.datasets.store.aliases import promote_alias
from golden_distill.datasets.store.layout import SetLayout, check_alias, parse_ref
from golden_distill.datasets.store.set_lock import set_lock
from golden_distill.flows.cli.store_access import (
    ConfigOpt,
    OptionsOpt,
    PublicKeyOpt,
    StoreOpt,
    guard,
    open_ref,
    open_store,
    publish_config,
    resolve_ref,
    trusted_keys,
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
    force: Annotated[
        bool, typer.Option("--force", help="Allow moving the alias to an older version.")
    ] = False,
) -> None:
    """Point an alias at a version (atomically, holding the set's lock). The version must be
    published and verify (signature included, when a public key is given or the store has
    trusted_keys/). Moving an alias to an older version than it points at is refused without
    `--force`.

    Example: `golden sets promote nightly@2026.11.29.1 stable --min-trust oracle`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.trust import RANK

    if min_trust is not None and min_trust not in RANK:
        raise typer.BadParameter(f"one of {', '.join(RANK)}", param_hint="--min-trust")
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.verify import verify_version

    fs = open_store(store, storage_options, config)
    parsed = guard(lambda: parse_ref(ref))
    guard(lambda: check_alias(alias))
    keys = trusted_keys(public_key)
    version = guard(lambda: resolve_ref(fs, ref, keys)[1])
    report = guard(
        lambda: verify_version(fs, parsed.set_name, version, replay=False, public_keys=keys)
    )
    if not report.ok:
        for line in report.lines():
            typer.echo(f"FAIL {line}", err=True)
        raise typer.Exit(1)
    if min_trust is not None:
        golden = guard(lambda: open_ref(fs, ref, public_key=keys))
        weak = _weaker_regression_cases(golden, min_trust)
        if weak:
            typer.echo(
                f"refused: {len(weak)} case(s) of the regression split are trusted less than "
                f"{min_trust}, e.g. {', '.join(weak[:5])}; confirm them (golden review) or "
                "move them out of regression",
                err=True,
            )
            raise typer.Exit(1)

    def move() -> tuple[str | None, str | None]:
        with set_lock(fs, parsed.set_name, "promote").hold():
            return promote_alias(fs, SetLayout(parsed.set_name), alias, version, force=force)

    old, new = guard(move)
    typer.echo(f"{parsed.set_name}@{alias}: {old or '(none)'} -> {new}")


def _weaker_regression_cases(golden: Any, minimum: str) -> list[str]:
    """Ids of regression-split cases trusted less than ``minimum`` (a version without splits:
    every case counts as regression and unconfirmed)."""
    # heavy: loaded when the command runs, not for `golden --help`
    import polars as pl

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.trust import weaker_in_regression

    frame = pl.from_arrow(golden.read_table())
    assert isinstance(frame, pl.DataFrame)
    return sorted(weaker_in_regression(frame, minimum).get_column("case_id").to_list())


def gc_cmd(
    name: Annotated[str, typer.Argument(help="The set to clean up.")],
    keep_last: Annotated[
        int | None, typer.Option(min=0, help="Keep the newest N versions (0 or more).")
    ] = None,
    keep_days: Annotated[
        float | None, typer.Option(min=0, help="Keep versions younger than D (0 or more).")
    ] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Delete (default: dry run).")] = False,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Delete old versions (never one an alias points to, never the head). Dry run unless
    --apply.

    Keeps the newest N and those younger than D days (defaults: `publish.retention`), and
    removes leftovers of publishers that died. Example: `golden sets gc nightly --keep-last 5`
    """
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.gc import apply_gc, plan_gc

    cfg = guard(lambda: publish_config(config)).retention
    fs = open_store(store, storage_options, config)
    plan = guard(
        lambda: plan_gc(
            fs,
            name,
            keep_last=cfg.keep_last if keep_last is None else keep_last,
            keep_days=cfg.keep_days if keep_days is None else keep_days,
            orphan_grace_hours=cfg.orphan_grace_hours,
        )
    )
    if apply:
        plan = guard(lambda: apply_gc(fs, plan))
    verb = "deleted" if apply else "would delete"
    for version, why in plan.keep.items():
        typer.echo(f"keep    {version}  ({why})")
    for version in plan.delete:
        typer.echo(f"{verb:<7} {version}")
    for rel in plan.orphans:
        typer.echo(f"{verb:<7} leftover {rel}")
    if not apply and (plan.delete or plan.orphans):
        typer.echo("dry run: nothing deleted; add --apply to delete")
