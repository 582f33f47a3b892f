"""Names are full matches everywhere (CLI, reader, store API) and a refused name leaves no file;
a publish whose `latest` move fails leaves nothing visible; clusters.parquet marks the cases
actually published."""

from __future__ import annotations

import pyarrow as pa
import pytest
import typer
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store import publish as publish_module
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.integrity import TamperError
from golden_distill.datasets.store.layout import LayoutError, SetLayout, parse_ref
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.verify import verify_version
from golden_distill.datasets.store.versions import list_versions
from golden_distill.flows.cli import sets as sets_cli

SET = "nightly"
BAD_NAMES = ["stable\n", "stable\r", "sta\x00ble", "st\u2215able", "st\uff0eable", "../x", "a/b"]
runner = CliRunner()
app = typer.Typer()
sets_cli.register(app)


def _cli(target, *args: str):
    return runner.invoke(app, ["sets", *args, *target.cli_args()])


def _all_files(store: StoreFS) -> set[str]:
    return {p.split("/store/", 1)[-1] for p in store.fs.find(store.root)}


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_names_with_line_breaks_or_look_alikes_are_refused_and_leave_no_file(target, casegen, bad):
    result = publish_version(target.url, SET, cases=casegen.make_table(5), **target.kwargs())
    store = StoreFS(target.url, target.storage_options)
    before = _all_files(store)

    promote = _cli(target, "promote", f"{SET}@{result.version}", bad)
    assert promote.exit_code == 2 and "not a valid alias" in promote.output
    for ref in (f"{bad}@latest", f"{SET}@{bad}", f"{SET}@{result.version}\n"):
        with pytest.raises(LayoutError):
            parse_ref(ref)
        with pytest.raises(LayoutError):
            open_set(target.url, ref, **target.kwargs())
        assert _cli(target, "verify", ref).exit_code == 2
    with pytest.raises(LayoutError):
        publish_version(target.url, bad, cases=casegen.make_table(5), **target.kwargs())
    with pytest.raises(LayoutError):
        SetLayout(SET).version_file(result.version, bad)
    assert _all_files(store) == before


def test_latest_failing_to_move_withdraws_the_version(target, casegen, monkeypatch):
    first = publish_version(target.url, SET, cases=casegen.make_table(5), **target.kwargs())

    def broken(*args, **kwargs):
        raise OSError("network down while moving latest")

    monkeypatch.setattr(publish_module, "move_alias", broken)
    with pytest.raises(OSError):
        publish_version(target.url, SET, cases=casegen.make_table(8), **target.kwargs())
    store = StoreFS(target.url, target.storage_options)
    assert list_versions(store, SET) == [first.version]
    assert open_set(target.url, SET, **target.kwargs()).version == first.version


def test_clusters_mark_the_published_representative_or_none(target, casegen):
    table = casegen.make_table(6)  # cluster k-0: cases 0,1; k-1: 2,3; k-2: 4,5
    ids = table.column("case_id").to_pylist()
    clusters = pa.table(
        {
            "cluster_id": ["k-0", "k-0", "k-1", "k-1", "k-2", "k-2"],
            "case_id": ids,
            "role": ["representative", "member"] * 3,
        }
    )
    # case 0 was refused by redaction and case 1 replaced it; cluster k-2 lost every member
    keep = [1, 2]
    published = publish_version(
        target.url, SET, cases=table.take(keep), clusters=clusters, **target.kwargs()
    )
    golden = open_set(target.url, f"{SET}@{published.version}", **target.kwargs())
    rows = {r["case_id"]: r for r in golden.clusters().to_pylist()}
    assert rows[ids[1]]["role"] == "representative" and rows[ids[1]]["published"]
    assert rows[ids[0]]["role"] == "member" and not rows[ids[0]]["published"]
    assert rows[ids[2]]["role"] == "representative"
    reps = {r["case_id"] for r in rows.values() if r["role"] == "representative"}
    assert reps == set(golden.read_table().column("case_id").to_pylist())
    assert not rows[ids[4]]["cluster_published"] and not rows[ids[5]]["cluster_published"]
    assert rows[ids[0]]["cluster_published"]


def test_a_symlink_leading_out_of_the_version_folder_is_refused(tmp_path, casegen):
    """Same bytes, so size and sha256 match: only the link itself gives it away."""
    url = str(tmp_path / "store")
    result = publish_version(url, SET, cases=casegen.make_table(5))
    store = StoreFS(url)
    inside = store.local_path(SetLayout(SET).version_file(result.version, "cases.parquet"))
    outside = tmp_path / "elsewhere.parquet"
    outside.write_bytes(inside.read_bytes())
    inside.unlink()
    inside.symlink_to(outside)
    with pytest.raises(TamperError, match="symlink leading out"):
        open_set(url, f"{SET}@{result.version}")
    report = verify_version(store, SET, result.version)
    assert not report.ok and f"{SET}@{result.version}" in report.problems[0]


def test_signing_key_from_pem_text_or_file(tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from golden_distill.datasets.store.signing import (
        SigningKeyError,
        public_key_id,
        signing_key_from_env,
    )

    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "signer.pem"
    path.write_bytes(pem)
    want = public_key_id(key.public_key())
    for value in (pem.decode(), str(path)):
        loaded = signing_key_from_env({"GOLDEN_SIGNING_KEY": value})
        assert loaded is not None and public_key_id(loaded.public_key()) == want
    assert signing_key_from_env({}) is None
    with pytest.raises(SigningKeyError) as info:
        signing_key_from_env({"GOLDEN_SIGNING_KEY": str(tmp_path / "missing.pem")})
    assert "BEGIN" not in str(info.value)
