"""Retention on a signed store: `golden sets gc` (defaults from `publish.retention`) deletes old
unaliased versions with their signatures; what remains still verifies under the trusted key."""

from __future__ import annotations

import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from golden_distill.datasets.store.aliases import move_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.signing import TRUSTED_KEYS_DIR, public_key_pem
from golden_distill.datasets.store.verify import verify_version
from golden_distill.datasets.store.versions import list_versions
from golden_distill.flows.cli import sets as sets_cli

SET = "nightly"
runner = CliRunner()
app = typer.Typer()
sets_cli.register(app)


def test_gc_on_a_signed_store_uses_the_configured_retention(target, casegen, tmp_path):
    key = Ed25519PrivateKey.generate()
    store = StoreFS(target.url, target.storage_options)
    store.write_atomic(f"{TRUSTED_KEYS_DIR}/publisher.pem", public_key_pem(key))
    versions = [
        publish_version(target.url, SET, cases=casegen.make_table(4 + i), **target.kwargs(),
                        signing_key=key).version
        for i in range(4)
    ]  # fmt: skip
    move_alias(store, SetLayout(SET), "stable", versions[0])
    config = tmp_path / "gc.yaml"
    config.write_text("publish:\n  retention:\n    keep_last: 1\n    keep_days: 0\n")
    args = ["sets", "gc", SET, "--config", str(config), "--apply"]
    out = runner.invoke(app, [*args, *target.cli_args()])
    assert out.exit_code == 0, out.output
    assert list_versions(store, SET) == [versions[0], versions[3]]
    for gone in versions[1:3]:
        assert store.list_names(SetLayout(SET).version_dir(gone)) == []  # signature too
    for kept in (versions[0], versions[3]):
        report = verify_version(store, SET, kept)
        assert report.ok and report.signed_by is not None
