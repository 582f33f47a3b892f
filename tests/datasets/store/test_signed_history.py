"""A signed history and a pinned key, checked by every consumer entry point.

A store signed by the publisher's key gets three versions; each test tampers with it as someone
who can write the store would (roll ``latest`` back, move a staged folder in, slip in an unlisted
case file, strip or replace a signature and add the rogue key to ``trusted_keys/``). With the
publisher's public key pinned, the reader (``public_key=`` and ``GOLDEN_PUBLIC_KEY``), ``golden
sets verify``, ``golden replay``, ``golden export`` and the pytest plugin all refuse, naming the
problem; replay never prints ``gate PASS``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.history import HistoryError
from golden_distill.datasets.store.layout import MANIFEST_NAME, SetLayout
from golden_distill.datasets.store.manifest import ManifestError, dump_manifest
from golden_distill.datasets.store.publish import PAUSE_ENV, publish_version
from golden_distill.datasets.store.signing import (
    PUBLIC_KEY_ENV,
    SIGNATURE_NAME,
    SIGNING_KEY_ENV,
    TRUSTED_KEYS_DIR,
    public_key_pem,
    sign_manifest,
)
from golden_distill.datasets.store.verify import ChecksumError, verify_version
from golden_distill.datasets.store.versions import VersionNotFound, read_manifest
from golden_distill.flows.cli import app

pytest_plugins = ("pytester",)

SET = "nightly"
PROC = Path(__file__).with_name("publisher_proc.py")
AGENT = "golden_distill.datasets.replay.agents:reissue"
runner = CliRunner()


@dataclass
class Signed:
    url: str
    store: StoreFS
    key: Ed25519PrivateKey
    pem: Path
    versions: list[str]
    casegen: object

    def latest(self) -> str | None:
        return read_alias(self.store, SetLayout(SET), "latest")


@pytest.fixture
def signed(tmp_path: Path, casegen) -> Signed:
    url = str(tmp_path / "store")
    key = Ed25519PrivateKey.generate()
    store = StoreFS(url)
    store.write_atomic(f"{TRUSTED_KEYS_DIR}/publisher.pem", public_key_pem(key))
    versions = [
        publish_version(
            url, SET, cases=casegen.make_table(8 + 4 * i, 20 * i), signing_key=key
        ).version
        for i in range(3)
    ]
    pem = tmp_path / "publisher.pub.pem"
    pem.write_bytes(public_key_pem(key))
    return Signed(url, store, key, pem, versions, casegen)


def test_manifests_chain_parent_and_sequence(signed: Signed) -> None:
    manifests = [read_manifest(signed.store, SET, v) for v in signed.versions]
    assert [m["sequence"] for m in manifests] == [1, 2, 3]
    assert [m["parent_version"] for m in manifests] == [None, *signed.versions[:2]]
    golden = open_set(signed.url, SET, public_key=signed.pem)
    assert golden.version == signed.versions[-1] and golden.sequence == 3


# -- the tampers: each returns the reference a consumer asks for ----------------------------------


def rollback_file(s: Signed) -> str:
    s.store.write_atomic(SetLayout(SET).ref("latest"), f"{s.versions[0]}\n".encode())
    return f"{SET}@latest"


def rollback_symlink(s: Signed) -> str:
    refs = s.store.local_path(SetLayout(SET).refs_dir)
    (refs.parent / "old-head").write_text(f"{s.versions[1]}\n")
    (refs / "latest").unlink()
    os.symlink(refs.parent / "old-head", refs / "latest")
    return f"{SET}@latest"


def promoted_backwards_with_force(s: Signed) -> str:
    refused = _cli("sets", "promote", f"{SET}@{s.versions[0]}", "latest", "--store", s.url)
    assert refused.exit_code == 2 and "backwards" in refused.output
    assert s.latest() == s.versions[-1]  # without --force nothing moved
    forced = _cli(
        "sets", "promote", f"{SET}@{s.versions[0]}", "latest", "--force", "--store", s.url
    )
    assert forced.exit_code == 0, forced.output
    assert s.latest() == s.versions[0]
    return f"{SET}@latest"


def staged_folder_moved_in(s: Signed) -> str:
    """A real publisher killed just before its version became visible; its staging folder is
    then moved into versions/ under the id it claimed."""
    version = _killed_at_staged(s)
    layout = SetLayout(SET)
    staging = s.store.local_path(layout.staging_dir)
    folder = next(p for p in staging.iterdir() if not p.name.endswith(".manifest"))
    assert not (folder / MANIFEST_NAME).exists()  # the manifest waits beside, never inside
    os.rename(folder, s.store.local_path(layout.version_dir(version)))
    return f"{SET}@{version}"


def staged_fork_as_stable(s: Signed) -> str:
    """Worse: the staged folder *and* the manifest waiting beside it are moved in after a later
    publish, and `stable` pointed at it: a signed version that is a fork of the history."""
    version = _killed_at_staged(s)
    later = publish_version(s.url, SET, cases=s.casegen.make_table(9, 300), signing_key=s.key)
    layout = SetLayout(SET)
    staging = s.store.local_path(layout.staging_dir)
    folder = next(p for p in staging.iterdir() if not p.name.endswith(".manifest"))
    target = s.store.local_path(layout.version_dir(version))
    os.rename(folder, target)
    for name in (MANIFEST_NAME, SIGNATURE_NAME):
        os.rename(staging / f"{folder.name}.manifest" / name, target / name)
    assert s.latest() == later.version
    assert verify_version(s.store, SET, version).ok  # its own signature is the publisher's
    s.store.write_atomic(layout.ref("stable"), f"{version}\n".encode())
    return f"{SET}@stable"


def extra_unlisted_parquet(s: Signed) -> str:
    layout = SetLayout(SET)
    version = s.versions[-1]
    older = s.store.read_bytes(layout.version_file(s.versions[0], "cases.parquet"))
    s.store.write_atomic(layout.version_file(version, "cases-0000.parquet"), older)
    return f"{SET}@{version}"


def stripped_signature(s: Signed) -> str:
    s.store.remove(SetLayout(SET).version_file(s.versions[-1], SIGNATURE_NAME))
    return f"{SET}@latest"


def resigned_with_trusted_rogue(s: Signed) -> str:
    """The manifest edited and re-signed by a key the attacker added to trusted_keys/."""
    rogue = Ed25519PrivateKey.generate()
    s.store.write_atomic(f"{TRUSTED_KEYS_DIR}/rogue.pem", public_key_pem(rogue))
    layout = SetLayout(SET)
    version = s.versions[-1]
    manifest = orjson.loads(s.store.read_bytes(layout.manifest(version)))
    manifest["notes"] = "forged"
    manifest.pop("manifest_sha256", None)
    data = dump_manifest(manifest)
    s.store.write_atomic(layout.manifest(version), data)
    s.store.write_atomic(layout.version_file(version, SIGNATURE_NAME), sign_manifest(data, rogue))
    assert verify_version(s.store, SET, version).ok  # trusted_keys/ alone accepts it
    return f"{SET}@latest"


TAMPERS = {
    rollback_file: r"rollback of latest",
    rollback_symlink: r"rollback of latest",
    promoted_backwards_with_force: r"rollback of latest",
    staged_folder_moved_in: r"no such published version|not published",
    staged_fork_as_stable: r"not on the signed chain",
    extra_unlisted_parquet: r"not listed in the manifest: cases-0000\.parquet",
    stripped_signature: r"unsigned|not in the set's signed history",
    resigned_with_trusted_rogue: r"not a trusted key|not in the set's signed history",
}


def _killed_at_staged(s: Signed) -> str:
    key_file = s.pem.with_name("publisher.key.pem")
    key_file.write_bytes(
        s.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    env = {**os.environ, PAUSE_ENV: "staged", SIGNING_KEY_ENV: str(key_file)}
    spec = {"url": s.url, "set": SET, "options": None, "start": 500, "n": 10}
    proc = subprocess.Popen(
        [sys.executable, str(PROC), json.dumps(spec)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in proc.stderr:
            if line.strip() == "GOLDEN_PUBLISH_PAUSED staged":
                break
        else:
            pytest.fail("publisher exited before pausing at staged")
    finally:
        proc.kill()
        proc.wait(30)
    claims = s.store.list_names(SetLayout(SET).claims_dir)
    version = max(claims, key=lambda v: tuple(int(x) for x in v.split(".")))
    assert version not in s.versions
    return version


def _cli(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, list(args), env=env)


@pytest.mark.parametrize("tamper", list(TAMPERS), ids=[t.__name__ for t in TAMPERS])
def test_every_entry_point_refuses_with_a_pinned_key(
    signed: Signed, tamper, tmp_path: Path, pytester: pytest.Pytester, monkeypatch
) -> None:
    pattern = TAMPERS[tamper]
    ref = tamper(signed)
    expected = (ManifestError, ChecksumError, VersionNotFound)

    # the reader: an explicit key, and the key from GOLDEN_PUBLIC_KEY
    with pytest.raises(expected, match=pattern):
        open_set(signed.url, ref, public_key=signed.pem).read_table()
    monkeypatch.setenv(PUBLIC_KEY_ENV, str(signed.pem))
    with pytest.raises(expected, match=pattern):
        open_set(signed.url, ref).read_table()
    monkeypatch.delenv(PUBLIC_KEY_ENV)

    verify = _cli("sets", "verify", ref, "--store", signed.url, "--public-key", str(signed.pem))
    assert verify.exit_code in (1, 2) and re.search(pattern, verify.output), verify.output

    replay = _cli("replay", ref, "--store", signed.url, "--agent", AGENT,
                  "--out", str(tmp_path / "replay"), "--public-key", str(signed.pem))  # fmt: skip
    assert replay.exit_code == 2 and re.search(pattern, replay.output), replay.output
    assert "gate PASS" not in replay.output
    replay_env = _cli("replay", ref, "--store", signed.url, "--agent", AGENT,
                      "--out", str(tmp_path / "replay2"),
                      env={PUBLIC_KEY_ENV: signed.pem.read_text()})  # fmt: skip
    assert replay_env.exit_code == 2 and "gate PASS" not in replay_env.output

    export = _cli("export", ref, "--store", signed.url, "--format", "chat-jsonl",
                  "--out", str(tmp_path / "export"), "--public-key", str(signed.pem))  # fmt: skip
    assert export.exit_code == 2 and re.search(pattern, export.output), export.output
    assert not (tmp_path / "export").exists() or not any((tmp_path / "export").iterdir())

    pytester.makepyfile(test_golden="def test_case(golden_case):\n    assert golden_case\n")
    result = pytester.runpytest_subprocess(
        "--golden-store", signed.url, "--golden-set", ref,
        "--golden-public-key", str(signed.pem), "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret != 0
    assert re.search(pattern, result.stderr.str() + result.stdout.str())
    result.assert_outcomes(errors=1)  # refused at collection: no case ran


def test_the_intact_store_opens_everywhere_with_the_pinned_key(
    signed: Signed, tmp_path: Path, pytester: pytest.Pytester
) -> None:
    """The control: the same calls succeed on the untampered store (so the refusals above are
    the tampers', not the setup's)."""
    ref = f"{SET}@latest"
    assert open_set(signed.url, ref, public_key=signed.pem).version == signed.versions[-1]
    verify = _cli("sets", "verify", ref, "--store", signed.url, "--public-key", str(signed.pem))
    assert verify.exit_code == 0, verify.output
    replay = _cli("replay", ref, "--store", signed.url, "--agent", AGENT,
                  "--out", str(tmp_path / "replay"), "--public-key", str(signed.pem))  # fmt: skip
    assert replay.exit_code in (0, 1) and "gate" in replay.output, replay.output
    export = _cli("export", ref, "--store", signed.url, "--format", "chat-jsonl",
                  "--out", str(tmp_path / "export"), "--public-key", str(signed.pem))  # fmt: skip
    assert export.exit_code == 0 and "16 cases written" in export.output, export.output
    pytester.makepyfile(test_golden="def test_case(golden_case):\n    assert golden_case\n")
    result = pytester.runpytest_subprocess(
        "--golden-store", signed.url, "--golden-set", ref,
        "--golden-public-key", str(signed.pem), "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=16)
    # an older version asked for by its exact id is not a rollback
    old = open_set(signed.url, f"{SET}@{signed.versions[0]}", public_key=signed.pem)
    assert old.sequence == 1


def test_promote_forward_takes_the_lock_and_stable_may_trail(signed: Signed) -> None:
    ok = _cli("sets", "promote", f"{SET}@{signed.versions[0]}", "stable", "--store", signed.url)
    assert ok.exit_code == 0, ok.output
    # a trailing `stable` on the chain is fine for a pinned reader
    golden = open_set(signed.url, f"{SET}@stable", public_key=signed.pem)
    assert golden.version == signed.versions[0]
    back = _cli("sets", "promote", f"{SET}@{signed.versions[1]}", "stable", "--store", signed.url)
    assert back.exit_code == 0
    refused = _cli(
        "sets", "promote", f"{SET}@{signed.versions[0]}", "stable", "--store", signed.url
    )
    assert refused.exit_code == 2 and "backwards" in refused.output
    lock = signed.store.local_path(f"{SET}/_lock")
    holder = {"token": "x", "pid": os.getpid(), "host": socket.gethostname(), "purpose": "run"}
    lock.write_bytes(orjson.dumps(holder))  # held by a live process: this one
    locked = _cli("sets", "promote", f"{SET}@{signed.versions[2]}", "stable", "--store", signed.url)
    assert locked.exit_code == 2 and "locked" in locked.output
    assert read_alias(signed.store, SetLayout(SET), "stable") == signed.versions[1]


def test_unsigned_store_keeps_working_and_still_refuses_unlisted_files(tmp_path, casegen) -> None:
    url = str(tmp_path / "plain")
    first = publish_version(url, SET, cases=casegen.make_table(6)).version
    second = publish_version(url, SET, cases=casegen.make_table(7, 50)).version
    store = StoreFS(url)
    store.write_atomic(SetLayout(SET).ref("latest"), f"{first}\n".encode())
    assert open_set(url, SET).version == first  # no key pinned: as before
    assert read_manifest(store, SET, second)["sequence"] == 2
    extra = SetLayout(SET).version_file(second, "cases-0000.parquet")
    store.write_atomic(extra, store.read_bytes(SetLayout(SET).version_file(first, "cases.parquet")))
    assert not verify_version(store, SET, second).ok
    with pytest.raises(ManifestError, match="not listed"):
        open_set(url, f"{SET}@{second}")


def test_history_error_is_a_tamper_error() -> None:
    assert issubclass(HistoryError, ManifestError)


def test_rollback_and_unlisted_file_refused_on_every_store(target, casegen, tmp_path) -> None:
    """The same refusals on S3 (moto server) as in a folder: latest rolled back by a plain
    object write, and an unlisted case file uploaded next to the listed ones."""
    key = Ed25519PrivateKey.generate()
    pem = tmp_path / "publisher.pub.pem"
    pem.write_bytes(public_key_pem(key))
    kw = dict(**target.kwargs(), signing_key=key)
    first = publish_version(target.url, SET, cases=casegen.make_table(6), **kw).version
    second = publish_version(target.url, SET, cases=casegen.make_table(7, 40), **kw).version
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    assert open_set(target.url, SET, **target.kwargs(), public_key=pem).version == second

    store.write_atomic(layout.ref("latest"), f"{first}\n".encode())
    with pytest.raises(HistoryError, match=f"{second} .*rollback of latest"):
        open_set(target.url, SET, **target.kwargs(), public_key=pem)
    verify = _cli("sets", "verify", f"{SET}@latest", *target.cli_args(), "--public-key", str(pem))
    assert verify.exit_code == 1 and "rollback of latest" in verify.output
    assert open_set(target.url, SET, **target.kwargs()).version == first  # unpinned: as before

    store.write_atomic(layout.ref("latest"), f"{second}\n".encode())
    extra = layout.version_file(second, "cases-0000.parquet")
    store.write_atomic(extra, store.read_bytes(layout.version_file(first, "cases.parquet")))
    with pytest.raises(ManifestError, match=r"not listed in the manifest: cases-0000\.parquet"):
        open_set(target.url, SET, **target.kwargs(), public_key=pem)
    verify = _cli("sets", "verify", f"{SET}@latest", *target.cli_args(), "--public-key", str(pem))
    assert verify.exit_code == 1 and "cases-0000.parquet" in verify.output


def test_a_version_withdrawn_by_erasure_and_put_back_is_refused(signed: Signed, tmp_path) -> None:
    """`golden erase` withdraws the versions holding the subject; the next signed manifest
    names them, so a copy restored from a backup opens for no pinned reader, even by id."""
    import shutil
    from dataclasses import replace

    from golden_distill.flows.config import load_pipeline_config
    from golden_distill.redaction.key_rules import RuleMatcher
    from golden_distill.redaction.pseudonym import key_pseudonym

    pseudonym_key = "history-test-pseudonym-key-0123456789abcdef0123"
    rule = RuleMatcher(load_pipeline_config(None).redaction).match(("user_id",))
    user = key_pseudonym("mia_li_3650", rule.key_type, pseudonym_key.encode(), rule.prefix)
    cases = [signed.casegen.build_case(i) for i in range(700, 710)]
    cases[3] = replace(cases[3], user_id=user)
    held = publish_version(
        signed.url, SET, cases=signed.casegen.cases_table(cases), signing_key=signed.key
    ).version
    backup = tmp_path / "backup"
    shutil.copytree(signed.store.local_path(SetLayout(SET).version_dir(held)), backup)

    key_file = tmp_path / "signer.pem"
    key_file.write_bytes(
        signed.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    env = {"GOLDEN_PSEUDONYM_KEY": pseudonym_key, SIGNING_KEY_ENV: str(key_file)}
    done = _cli("erase", "--set", SET, "--subject", "user_id=mia_li_3650", "--store", signed.url,
                env=env)  # fmt: skip
    assert done.exit_code == 0, done.output
    new = signed.latest()
    assert new != held
    assert held in read_manifest(signed.store, SET, new)["erasure"]["withdrawn_versions"]

    shutil.copytree(backup, signed.store.local_path(SetLayout(SET).version_dir(held)))
    assert verify_version(signed.store, SET, held).ok  # its own signature is still good
    with pytest.raises(HistoryError, match=f"{held}: withdrawn by an erasure"):
        open_set(signed.url, f"{SET}@{held}", public_key=signed.pem)
    signed.store.write_atomic(SetLayout(SET).ref("stable"), f"{held}\n".encode())
    with pytest.raises(HistoryError, match="withdrawn by an erasure"):
        open_set(signed.url, f"{SET}@stable", public_key=signed.pem)
    for ref in (f"{SET}@{held}", f"{SET}@stable"):
        cli = _cli("export", ref, "--store", signed.url, "--format", "chat-jsonl",
                   "--out", str(tmp_path / "x"), "--public-key", str(signed.pem))  # fmt: skip
        assert cli.exit_code == 2 and "withdrawn by an erasure" in cli.output
    verify = _cli("sets", "verify", f"{SET}@{held}", "--store", signed.url,
                  "--public-key", str(signed.pem))  # fmt: skip
    assert verify.exit_code == 1 and "withdrawn by an erasure" in verify.output
    assert open_set(signed.url, f"{SET}@latest", public_key=signed.pem).version == new
