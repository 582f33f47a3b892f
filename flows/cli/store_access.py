"""What every command on a store shares: the `--store`, `--storage-options`, `--config` and
`--public-key` options, opening the store and a version, and expected errors as one clear line
with exit code 2 (``guard``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from golden_distill.datasets.config_model import ConfigError
from golden_distill.datasets.publish_config import PublishConfig
from golden_distill.datasets.store.fs import StoreError, StoreFS
from golden_distill.datasets.store.layout import LayoutError, parse_ref

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
        help="Ed25519 public key (PEM) the version must be signed by; repeatable. Default: "
        "GOLDEN_PUBLIC_KEY (PEM text or a path), else the store's trusted_keys/ (none there: "
        "signatures are not required). A pinned key replaces trusted_keys/ and makes an alias "
        "that points outside the signed history (rollback of latest, fork) an error.",
    ),
]


def publish_config(config: Path | None) -> Any:

    if config is None:
        return PublishConfig()
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.flows.config import load_pipeline_config

    return load_pipeline_config(config).publish


def open_store(store: str | None, options: str | None, config: Path | None) -> Any:
    """The store of `--store`, else `GOLDEN_STORE`, else ``publish.store_url`` of `--config`
    (a bad config: one clear line, exit code 2)."""
    cfg = guard(lambda: publish_config(config))
    storage_options = dict(cfg.storage_options)
    if options:
        try:
            extra = json.loads(options)
        except json.JSONDecodeError:
            raise typer.BadParameter("not valid JSON", param_hint="--storage-options") from None
        storage_options.update(extra)
    return StoreFS(store or cfg.store_url, storage_options)


def guard(action: Callable[[], T]) -> T:
    """Run ``action``; expected errors become one clear line and exit code 2."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.aliases import AliasBackwards
    from golden_distill.datasets.store.manifest import ManifestError
    from golden_distill.datasets.store.set_lock import SetLocked
    from golden_distill.datasets.store.verify import ChecksumError
    from golden_distill.datasets.store.versions import VersionNotFound

    expected = (
        AliasBackwards,
        SetLocked,
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


def open_ref(store: Any, ref: str, verify: bool = True, public_key: Any = None) -> Any:
    """The version ``ref`` names, opened and checked; ``public_key``: paths from
    `--public-key`, keys from ``trusted_keys()``, or None (``GOLDEN_PUBLIC_KEY``, else the
    store's ``trusted_keys/``)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.reader import GoldenSet
    from golden_distill.datasets.store.history import resolve_pinned
    from golden_distill.datasets.store.signing import pinned_keys

    parsed = parse_ref(ref)
    keys = pinned_keys(public_key or None)
    version = resolve_pinned(store, parsed, keys)
    return GoldenSet(store, parsed.set_name, version, verify=verify, public_keys=keys)


def resolve_ref(store: Any, ref: str, keys: Any) -> tuple[str, str]:
    """(set name, version) of ``ref``, checked against the signed history when keys are
    pinned (``history.resolve_pinned``)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.history import resolve_pinned

    parsed = parse_ref(ref)
    return parsed.set_name, resolve_pinned(store, parsed, keys)


def trusted_keys(public_key: list[Path] | None) -> Any:
    """The pinned keys: `--public-key` files, else ``GOLDEN_PUBLIC_KEY``, else None (the
    store's ``trusted_keys/`` apply)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.signing import pinned_keys

    return guard(lambda: pinned_keys(public_key or None))
