"""`golden erase`: remove a person's cases from every retained version of a golden set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from golden_distill.flows.cli.store_access import ConfigOpt, OptionsOpt, StoreOpt, guard, open_store

HELP = """Erase a subject (right to be forgotten) from every retained version of a set.

The subject's pseudonyms and placeholders are derived with the current pseudonym key (the same
code redaction uses), every case holding one is found in every published version, a new version
without them is published, aliases that pointed at affected versions move to it, and the
affected older versions are deleted. The set's erasure log (`<set>/_erasure/log.jsonl`) records
keyed hashes only; every later publish consults it, so the subject never comes back.

Examples:

    golden erase --store ./golden-store --set nightly --subject user_id=mia_li_3650 --dry-run
    golden erase --store s3://bucket/golden --set nightly \\
        --subject user_id=mia_li_3650 --subject email=mia.li@example.com

SUBJECT is FIELD=VALUE: a key field (user_id, customer_id...) or a personal field (email,
phone...) of the redaction config, or an entity type (PERSON=..., PHONE_NUMBER=...).
"""


def erase_cmd(
    set_name: Annotated[str, typer.Option("--set", help="The golden set to erase from.")],
    subject: Annotated[
        list[str],
        typer.Option("--subject", help="FIELD=VALUE naming the person; repeatable."),
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would change; change nothing.")
    ] = False,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Erase a subject from every retained version (see `golden erase --help`)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.erasure import (
        ErasureError,
        Subject,
        apply_erasure,
        plan_erasure,
    )

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.layout import check_set_name
    from golden_distill.redaction.key_rules import RuleMatcher
    from golden_distill.redaction.keys import PseudonymKeyError, resolve_key

    fs = open_store(store, storage_options, config)
    guard(lambda: check_set_name(set_name))
    pipeline = _pipeline_config(config)
    try:
        subjects = [Subject.parse(s) for s in subject]
        key = resolve_key(
            secret_block=pipeline.redaction.key_secret_block,
            local_key_file=pipeline.redaction.local_key_file,
        ).key
        matcher = RuleMatcher(pipeline.redaction)
        plan, _needles = guard(lambda: plan_erasure(fs, set_name, subjects, key.secret, matcher))
    except (ErasureError, PseudonymKeyError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    fields = ", ".join(s.field for s in subjects)
    typer.echo(f"{set_name}: subject(s) [{fields}] with key {key.key_id}")
    for version, ids in plan.affected.items():
        typer.echo(f"  {version}: {len(ids)} case(s) hold the subject")
    if not plan.affected:
        typer.echo("  no retained version holds the subject")
    if dry_run:
        if plan.latest in plan.affected:
            typer.echo(f"would publish a new version: {plan.latest} without its affected cases")
        for alias, version in plan.aliases_to_move.items():
            typer.echo(f"would move alias {alias}: {version} -> the new version")
        for version in plan.versions_to_delete:
            typer.echo(f"would delete version {version}")
        typer.echo("dry run: nothing changed (the erasure log is not written either)")
        return

    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.publish import PublishError, check_signer, publish_version
    from golden_distill.datasets.store.signing import SigningKeyError, signing_key_from_env

    try:  # before anything is written: the new version must be one its readers accept
        signer = signing_key_from_env(secret_block=pipeline.publish.signing_key_secret_block)
        check_signer(fs, signer)
    except (PublishError, SigningKeyError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None

    def publish(table: Any, clusters: Any, fields_: dict[str, Any]) -> str:
        return publish_version(
            fs.url,
            set_name,
            cases=table,
            clusters=clusters,
            manifest_fields=fields_,
            force=True,
            storage_options=fs.storage_options or None,
            config=pipeline.publish,
            signing_key=signer,
        ).version

    plan = guard(lambda: apply_erasure(fs, plan, key_id=key.key_id, publish=publish))
    if plan.new_version:
        typer.echo(f"published {set_name}@{plan.new_version} without the subject")
    for alias, (old, new) in plan.moved.items():
        typer.echo(f"moved alias {alias}: {old} -> {new}")
    for version in plan.deleted:
        typer.echo(f"deleted version {version}")
    typer.echo("erasure logged (keyed hashes only); later publishes leave the subject out")


def _pipeline_config(config: Path | None) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config

    return guard(lambda: load_pipeline_config(config))


def register(app: typer.Typer) -> None:
    app.command("erase", help=HELP, no_args_is_help=True)(erase_cmd)
