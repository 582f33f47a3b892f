"""`golden erase` never weakens the store and leaves nothing behind: it refuses to replace signed
versions without a signing key, refuses (saying who) while another writer holds the set, removes
staging leftovers of killed publishes, and reports / removes (`--work`) the subject's raw values
in the set's work folder; on a folder and on S3."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import typer
from typer.testing import CliRunner

from golden_distill.datasets.store.erasure_log import log_path
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.set_lock import SetLock
from golden_distill.datasets.store.signing import SIGNATURE_NAME
from golden_distill.datasets.store.versions import list_versions
from golden_distill.flows.cli import erase as erase_cli
from golden_distill.flows.config import load_pipeline_config
from golden_distill.redaction.key_rules import RuleMatcher
from golden_distill.redaction.pseudonym import key_pseudonym

SET = "nightly"
KEY = "erasure-guard-test-pseudonym-key-0123456789abcdef"
USER = "mia_li_3650"
runner = CliRunner()
app = typer.Typer()
erase_cli.register(app)
app.command("noop", hidden=True)(lambda: None)  # keep `erase` a sub-command


def _with_subject(casegen, n: int = 10):
    rule = RuleMatcher(load_pipeline_config(None).redaction).match(("user_id",))
    user = key_pseudonym(USER, rule.key_type, KEY.encode(), rule.prefix)
    cases = [casegen.build_case(i) for i in range(n)]
    cases[3] = replace(cases[3], user_id=user)
    return casegen.cases_table(cases)


def _erase(target, *args: str):
    return runner.invoke(
        app, ["erase", "--set", SET, "--subject", f"user_id={USER}", *args, *target.cli_args()]
    )


def test_erase_without_the_signing_key_never_downgrades_signed_versions(
    target, casegen, monkeypatch
):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    monkeypatch.delenv("GOLDEN_SIGNING_KEY", raising=False)
    store = StoreFS(target.url, target.storage_options)
    signer = Ed25519PrivateKey.generate()  # signed versions, no trusted_keys/ in the store
    v1 = publish_version(target.url, SET, cases=_with_subject(casegen), signing_key=signer,
                         **target.kwargs()).version  # fmt: skip
    refused = _erase(target)
    assert refused.exit_code == 2, refused.output
    assert "signed version" in refused.output and "GOLDEN_SIGNING_KEY" in refused.output
    assert list_versions(store, SET) == [v1]  # nothing published, nothing deleted
    assert store.exists(SetLayout(SET).version_file(v1, SIGNATURE_NAME))
    assert not store.exists(log_path(SetLayout(SET)))


def test_erase_while_another_writer_holds_the_set_fails_naming_it(target, casegen, monkeypatch):
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    store = StoreFS(target.url, target.storage_options)
    v1 = publish_version(target.url, SET, cases=_with_subject(casegen), **target.kwargs()).version
    with SetLock(store, SET, "run").hold():
        busy = _erase(target, "--wait", "0")
    assert busy.exit_code == 2, busy.output
    assert "is locked (run by pid" in busy.output and "NOT erased" in busy.output
    assert list_versions(store, SET) == [v1] and not store.exists(log_path(SetLayout(SET)))
    done = _erase(target, "--wait", "0")  # released: now it goes through
    assert done.exit_code == 0, done.output
    assert list_versions(store, SET) != [v1]


def test_erase_removes_staging_leftovers(target, casegen, monkeypatch):
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    publish_version(target.url, SET, cases=_with_subject(casegen), **target.kwargs())
    # what a publisher killed while staging leaves (it may hold the subject's cases)
    store.write_atomic(f"{layout.staging_dir}/deadbeef/cases.parquet", b"staged rows")
    store.write_atomic(f"{layout.trash_dir}/2026.01.01.1-abcd/cases.parquet", b"old rows")
    done = _erase(target)
    assert done.exit_code == 0, done.output
    assert "removed leftover" in done.output
    assert store.list_names(layout.staging_dir) == [] and store.list_names(layout.trash_dir) == []


def test_erase_reports_the_work_folder_and_removes_it_with_work(
    target, casegen, monkeypatch, tmp_path
):
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    publish_version(target.url, SET, cases=_with_subject(casegen), **target.kwargs())
    work = tmp_path / "work"
    shard = work / "sets" / SET / "shards" / "abc"
    shard.mkdir(parents=True)
    raw = pa.table({"case_id": ["c1", "c2"], "user_id": ["someone_else", USER.upper()]})
    pq.write_table(raw, shard / "candidates.parquet")
    clean = work / "sets" / SET / "shards" / "def"
    clean.mkdir(parents=True)
    pq.write_table(pa.table({"case_id": ["c3"], "user_id": ["nobody"]}), clean / "c.parquet")
    (work / "sets" / SET / "errors.log").write_text(json.dumps({"line": f"bad {USER}"}))

    report = _erase(target, "--work-dir", str(work))
    assert report.exit_code == 0, report.output
    assert "2 file(s) in 2 unit(s) still hold" in report.output and str(shard) in report.output
    assert USER not in report.output
    assert shard.exists()  # reported, not removed without --work

    removed = _erase(target, "--work-dir", str(work), "--work")
    assert removed.exit_code == 0, removed.output
    assert "removed 2 unit(s)" in removed.output
    assert not shard.exists() and not (work / "sets" / SET / "errors.log").exists()
    assert Path(clean / "c.parquet").exists()  # what does not hold the subject stays
