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
keyed hashes only; every later publish consults it, so the subject never comes back. With
GOLDEN_ERASURE_KEY set, the log also holds the subject's raw digest under that key, which
every run checks before redaction: the erasure then survives a pseudonym-key rotation
(docs/privacy.md).

Erase is a writer of the set: it holds the set's lock (waiting up to --wait seconds for a run
in flight to finish), so no publish can bring the subject back after it. It removes the set's
staging leftovers, refuses to replace signed versions with unsigned ones (set
GOLDEN_SIGNING_KEY), and reports the work-folder files that still hold the subject's raw
values; --work removes them.

Examples:

    golden erase --store ./golden-store --set nightly --subject user_id=mia_li_3650 --dry-run
    golden erase --store s3://bucket/golden --set nightly \\
        --subject user_id=mia_li_3650 --subject email=mia.li@example.com --work

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
    work: Annotated[
        bool,
        typer.Option("--work", help="Also remove the work-folder files holding the subject."),
    ] = False,
    work_dir: Annotated[
        str | None, typer.Option("--work-dir", help="The work folder (default: run.work_dir).")
    ] = None,
    wait: Annotated[
        float | None,
        typer.Option(
            "--wait", min=0, help="Seconds to wait for a run holding the set (default: config)."
        ),
    ] = None,
    store: StoreOpt = None,
    storage_options: OptionsOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Erase a subject from every retained version (see `golden erase --help`)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.erasure import ErasureError, Subject, plan_erasure
    from golden_distill.datasets.store.erasure_key import ErasureKeyError, erasure_key_from_env
    from golden_distill.datasets.store.layout import check_set_name
    from golden_distill.redaction.erasure_needles import needles_of
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
        erasure_key = erasure_key_from_env()
        needles = needles_of(subjects, key.secret, RuleMatcher(pipeline.redaction))
    except (ErasureError, PseudonymKeyError, ErasureKeyError) as exc:
        _fail(str(exc))
    signer = None if dry_run else _signer_for(fs, set_name, pipeline)
    folder = _set_work_folder(work_dir, pipeline, set_name)

    def plan_now() -> Any:
        try:
            return guard(
                lambda: plan_erasure(fs, set_name, subjects, key.secret, needles, erasure_key)
            )[0]
        except ErasureError as exc:
            _fail(str(exc))

    fields = ", ".join(s.field for s in subjects)
    typer.echo(f"{set_name}: subject(s) [{fields}] with key {key.key_id}")
    if erasure_key is None:
        typer.echo(
            "warning: GOLDEN_ERASURE_KEY is not set: the log holds this key's pseudonyms only, "
            "so a pseudonym-key rotation would let the subject back in (docs/privacy.md)",
            err=True,
        )
    if dry_run:
        plan = plan_now()
        _show_plan(plan)
        if plan.latest in plan.affected:
            typer.echo(f"would publish a new version: {plan.latest} without its affected cases")
        for alias, version in plan.aliases_to_move.items():
            typer.echo(f"would move alias {alias}: {version} -> the new version")
        for version in plan.versions_to_delete:
            typer.echo(f"would delete version {version}")
        _report_work(folder, subjects, remove=False)
        typer.echo("dry run: nothing changed (the erasure log is not written either)")
        return
    _erase_locked(fs, set_name, pipeline, key.key_id, signer, plan_now, wait)
    _report_work(folder, subjects, remove=work)


def _erase_locked(
    fs: Any, set_name: str, pipeline: Any, key_id: str, signer: Any, plan_now: Any,
    wait: float | None,
) -> None:  # fmt: skip
    """Plan and apply under the set's lock, after settling a crashed publish (which may hold
    the subject: it is adopted or discarded first, then erased like any version)."""
    from golden_distill.datasets.store.erasure import apply_erasure
    from golden_distill.datasets.store.head import repair_head
    from golden_distill.datasets.store.publish import publish_version
    from golden_distill.datasets.store.set_lock import SetLock, SetLocked

    lock = SetLock(fs, set_name, "erase")
    try:
        lock.acquire(pipeline.run.set_lock_wait_seconds if wait is None else wait)
    except SetLocked as exc:
        _fail(f"{exc} (the subject was NOT erased)")
    try:
        for line in guard(lambda: repair_head(fs, set_name)).describe():
            typer.echo(line)
        plan = plan_now()
        _show_plan(plan)

        def publish(table: Any, clusters: Any, fields_: dict[str, Any], decisions: Any) -> str:
            return publish_version(
                fs.url,
                set_name,
                cases=table,
                clusters=clusters,
                decisions=decisions,
                manifest_fields=fields_,
                force=True,
                storage_options=fs.storage_options or None,
                config=pipeline.publish,
                signing_key=signer,
                expected_parent=plan.aliases.get("latest"),  # the head it was planned on
            ).version

        plan = guard(lambda: apply_erasure(fs, plan, key_id=key_id, publish=publish))
    finally:
        lock.release()
    if plan.new_version:
        typer.echo(f"published {set_name}@{plan.new_version} without the subject")
    for alias, (old, new) in plan.moved.items():
        typer.echo(f"moved alias {alias}: {old} -> {new}")
    for version in plan.deleted:
        typer.echo(f"deleted version {version}")
    for rel in plan.leftovers:
        typer.echo(f"removed leftover {rel}")
    typer.echo("erasure logged (keyed hashes only); later publishes leave the subject out")


def _show_plan(plan: Any) -> None:
    for version, ids in plan.affected.items():
        typer.echo(f"  {version}: {len(ids)} case(s) hold the subject")
    if not plan.affected:
        typer.echo("  no retained version holds the subject")


def _signer_for(fs: Any, set_name: str, pipeline: Any) -> Any:
    """The signing key, checked before anything is written: never an unsigned version in a
    store or set that is signed (no key: refuse)."""
    from golden_distill.datasets.store.erasure import signed_versions
    from golden_distill.datasets.store.publish import PublishError, check_signer
    from golden_distill.datasets.store.signing import (
        SIGNING_KEY_ENV,
        SigningKeyError,
        signing_key_from_env,
    )

    try:
        signer = signing_key_from_env(secret_block=pipeline.publish.signing_key_secret_block)
        check_signer(fs, signer)
    except (PublishError, SigningKeyError) as exc:
        _fail(str(exc))
    if signer is None:
        signed = guard(lambda: signed_versions(fs, set_name))
        if signed:
            _fail(
                f"{set_name} has {len(signed)} signed version(s) ({', '.join(signed[-3:])}); "
                f"erasing without a signing key would replace them with unsigned ones: set "
                f"{SIGNING_KEY_ENV} (or publish.signing_key_secret_block). Nothing was changed."
            )
    return signer


def _set_work_folder(work_dir: str | None, pipeline: Any, set_name: str) -> Path | str:
    from golden_distill.flows.params import set_folders

    base = work_dir or pipeline.run.work_dir
    return set_folders(base, None, set_name)["work_dir"]  # type: ignore[return-value]


def _report_work(folder: Path | str, subjects: list[Any], *, remove: bool) -> None:
    """Say what of the subject is left in the set's work folder (raw data), remove it with
    ``--work``."""
    from golden_distill.flows.erase_work import find_subject, remove_units

    if not isinstance(folder, Path):
        typer.echo(
            f"work folder {folder} is a URL: not scanned; expire it with the bucket's lifecycle "
            "rule (docs/operating.md)"
        )
        return
    found = find_subject(folder, [s.value for s in subjects])
    if not found.units:
        typer.echo(f"work folder {folder}: no file holds the subject")
        return
    if remove:
        removed = remove_units(found)
        typer.echo(f"work folder {folder}: removed {removed} unit(s) holding the subject")
        return
    typer.echo(
        f"work folder {folder}: {found.files} file(s) in {len(found.units)} unit(s) still hold "
        "the subject's raw values:"
    )
    for unit in found.units:
        typer.echo(f"  {unit}")
    typer.echo("  run again with --work to remove them (a later run recomputes them)")


def _fail(message: str) -> Any:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _pipeline_config(config: Path | None) -> Any:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config

    return guard(lambda: load_pipeline_config(config))


def register(app: typer.Typer) -> None:
    app.command("erase", help=HELP, no_args_is_help=True)(erase_cmd)
