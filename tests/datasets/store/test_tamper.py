"""The tamper suite: copies of a published store edited by hand, as an attacker or a careless
person would. Each edit is refused by `golden sets verify`, `promote`, `diff` and the reader, with
an error naming the version and the problem; on a folder and on S3, unsigned and signed."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.integrity import seal_manifest
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.manifest import ManifestError, content_sha256, dump_manifest
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.signing import (
    SIGNATURE_NAME,
    TRUSTED_KEYS_DIR,
    public_key_pem,
    sign_manifest,
)
from golden_distill.datasets.store.verify import ChecksumError, verify_version
from golden_distill.flows.cli import sets as sets_cli

SET = "nightly"
RAW_EMAIL = "planted.victim.7731@example.org"
runner = CliRunner()
app = typer.Typer()
sets_cli.register(app)

Tamper = Callable[[StoreFS, str], None]


def _cli(target, *args: str):
    return runner.invoke(app, ["sets", *args, *target.cli_args()])


def _manifest(store: StoreFS, version: str) -> dict:
    return orjson.loads(store.read_bytes(SetLayout(SET).manifest(version)))


def _write_manifest(store: StoreFS, version: str, manifest: dict, *, reseal: bool) -> None:
    if reseal and "manifest_sha256" in manifest:
        seal_manifest(manifest)
    store.write_atomic(SetLayout(SET).manifest(version), dump_manifest(manifest))


def replace_case_file(store: StoreFS, version: str) -> None:
    """The reported hole: a raw e-mail injected, sha256 and size fixed in the manifest."""
    rel = SetLayout(SET).version_file(version, "cases.parquet")
    table = pq.read_table(pa.BufferReader(store.read_bytes(rel)))
    inputs = table.column("user_input").to_pylist()
    inputs[0] = f"mail me at {RAW_EMAIL}"
    table = table.set_column(
        table.column_names.index("user_input"), "user_input", pa.array(inputs, pa.string())
    )
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    store.write_atomic(rel, data)
    manifest = _manifest(store, version)
    entry = next(f for f in manifest["files"] if f["name"] == "cases.parquet")
    entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    _write_manifest(store, version, manifest, reseal=False)


def replace_case_file_recompute_all(store: StoreFS, version: str) -> None:
    """A careful attacker: also recomputes content_sha256 and the seal (only a signature
    defends against this one)."""
    replace_case_file(store, version)
    manifest = _manifest(store, version)
    manifest["content_sha256"] = content_sha256(manifest["files"])
    _write_manifest(store, version, manifest, reseal=True)


def _edit(field: str, value) -> Tamper:
    def tamper(store: StoreFS, version: str) -> None:
        manifest = _manifest(store, version)
        if field == "counts":
            manifest["counts"]["cases"] = value
        else:
            manifest[field] = value
        _write_manifest(store, version, manifest, reseal=False)

    tamper.__name__ = f"edit_{field}"
    return tamper


def name_outside(store: StoreFS, version: str) -> None:
    manifest = _manifest(store, version)
    entry = next(f for f in manifest["files"] if f["role"] == "cases")
    entry["name"] = "../../../../elsewhere/x.parquet"
    _write_manifest(store, version, manifest, reseal=False)


def cases_entry_removed(store: StoreFS, version: str) -> None:
    manifest = _manifest(store, version)
    manifest["files"] = [f for f in manifest["files"] if f["role"] != "cases"]
    manifest["content_sha256"] = content_sha256(manifest["files"])
    _write_manifest(store, version, manifest, reseal=True)


def signed_by_other_key(store: StoreFS, version: str) -> None:
    rogue = Ed25519PrivateKey.generate()
    layout = SetLayout(SET)
    sig = sign_manifest(store.read_bytes(layout.manifest(version)), rogue)
    store.write_atomic(layout.version_file(version, SIGNATURE_NAME), sig)


def unsigned(store: StoreFS, version: str) -> None:
    store.remove(SetLayout(SET).version_file(version, SIGNATURE_NAME))


# (tamper, which stores it applies to, what the error must say)
CASES = [
    (replace_case_file, ("unsigned", "signed"), r"content_sha256|signature"),
    (replace_case_file_recompute_all, ("signed",), r"signature .*does not match"),
    (_edit("key_id", "k_0000000000000000"), ("unsigned", "signed"), r"manifest edited"),
    (_edit("lineage", {"sources": ["elsewhere"]}), ("unsigned", "signed"), r"manifest edited"),
    (_edit("config", {"ingest": {}}), ("unsigned", "signed"), r"config|manifest edited"),
    (_edit("counts", 999), ("unsigned", "signed"), r"counts\.cases is 999|manifest edited"),
    (name_outside, ("unsigned", "signed"), r"not a plain name|manifest edited"),
    (cases_entry_removed, ("unsigned", "signed"), r"no cases file|manifest edited"),
    (signed_by_other_key, ("signed",), r"not a trusted key"),
    (unsigned, ("signed",), r"unsigned"),
]
PARAMS = [
    pytest.param(tamper, mode, pattern, id=f"{tamper.__name__}-{mode}")
    for tamper, modes, pattern in CASES
    for mode in modes
]


@pytest.mark.parametrize(("tamper", "mode", "pattern"), PARAMS)
def test_tampered_version_is_refused_everywhere(target, casegen, tamper, mode, pattern):
    key = Ed25519PrivateKey.generate() if mode == "signed" else None
    store = StoreFS(target.url, target.storage_options)
    if key is not None:
        store.write_atomic(f"{TRUSTED_KEYS_DIR}/publisher.pem", public_key_pem(key))
    kw = dict(**target.kwargs(), signing_key=key)
    first = publish_version(target.url, SET, cases=casegen.make_table(20), **kw)
    second = publish_version(target.url, SET, cases=casegen.make_table(30), **kw)
    version = second.version
    assert verify_version(store, SET, version).ok  # intact before the edit
    if store.is_local:  # a file where the traversal would lead: it must never be read
        outside = store.local_path("").parent.parent.parent / "elsewhere"
        outside.mkdir(parents=True, exist_ok=True)
        (outside / "x.parquet").write_bytes(b"outside the store")

    tamper(store, version)
    label = f"{SET}@{version}"

    report = verify_version(store, SET, version)
    assert not report.ok
    assert any(label in p and re.search(pattern, p) for p in report.problems), report.problems
    cli = _cli(target, "verify", label)
    assert cli.exit_code == 1 and label in cli.output
    promote = _cli(target, "promote", label, "stable")
    assert promote.exit_code != 0 and label in promote.output
    assert not store.exists(SetLayout(SET).ref("stable"))
    diff = _cli(target, "diff", f"{SET}@{first.version}", label)
    assert diff.exit_code == 2 and label in diff.output
    with pytest.raises((ManifestError, ChecksumError), match=pattern) as raised:
        golden = open_set(target.url, label, **target.kwargs())
        golden.read_table()
    assert label in str(raised.value)
    assert RAW_EMAIL not in cli.output + promote.output + diff.output


def test_explicit_public_key_requires_a_signature_and_accepts_the_signer(target, casegen, tmp_path):
    key = Ed25519PrivateKey.generate()
    pem = tmp_path / "signer.pub.pem"
    pem.write_bytes(public_key_pem(key))
    signed = publish_version(target.url, SET, cases=casegen.make_table(10), **target.kwargs(),
                             signing_key=key)  # fmt: skip
    golden = open_set(target.url, f"{SET}@{signed.version}", **target.kwargs(), public_key=pem)
    assert len(golden) == 10 and golden.signed_by and golden.signed_by.startswith("sk_")
    ok = _cli(target, "verify", f"{SET}@{signed.version}", "--public-key", str(pem))
    assert ok.exit_code == 0 and golden.signed_by in ok.output
    show = _cli(target, "show", f"{SET}@{signed.version}")
    assert f"signed by key {golden.signed_by}" in show.output

    plain = publish_version(target.url, SET, cases=casegen.make_table(12), **target.kwargs())
    show = _cli(target, "show", f"{SET}@{plain.version}")
    assert "unsigned" in show.output
    assert open_set(target.url, f"{SET}@{plain.version}", **target.kwargs()).signed_by is None
    refused = _cli(target, "verify", f"{SET}@{plain.version}", "--public-key", str(pem))
    assert refused.exit_code == 1 and "unsigned" in refused.output
    with pytest.raises(ManifestError, match="unsigned"):
        open_set(target.url, f"{SET}@{plain.version}", **target.kwargs(), public_key=pem)


def test_row_count_lie_in_a_file_entry_is_caught_when_the_file_is_read(target, casegen):
    """Entry rows and counts both edited consistently (and resealed): the file's own rows win."""
    result = publish_version(target.url, SET, cases=casegen.make_table(15), **target.kwargs())
    store = StoreFS(target.url, target.storage_options)
    manifest = _manifest(store, result.version)
    manifest["files"][0]["rows"] = 999
    manifest["counts"]["cases"] = 999
    _write_manifest(store, result.version, manifest, reseal=True)
    golden = open_set(target.url, f"{SET}@{result.version}", **target.kwargs(), verify=False)
    with pytest.raises(ChecksumError, match="15 rows, manifest says 999"):
        len(golden)
    assert not verify_version(store, SET, result.version).ok
