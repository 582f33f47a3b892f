"""Erasure: a subject present in three versions is gone from every retained file afterwards,
aliases point at the new version, a later publish does not bring the subject back, and the other
cases are unchanged; through `golden erase`, on a folder and on S3."""

from __future__ import annotations

import json
from dataclasses import replace

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import list_aliases, move_alias
from golden_distill.datasets.store.erasure_log import log_path
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.versions import list_versions
from golden_distill.flows.cli import erase as erase_cli
from golden_distill.flows.config import load_pipeline_config
from golden_distill.redaction.key_rules import RuleMatcher
from golden_distill.redaction.pseudonym import key_pseudonym, value_token

SET = "nightly"
KEY = "erasure-test-pseudonym-key-0123456789abcdef0123"
USER, EMAIL = "mia_li_3650", "mia.li.3650@example.com"
runner = CliRunner()
app = typer.Typer()
erase_cli.register(app)
app.command("noop", hidden=True)(lambda: None)  # keep `erase` a sub-command


def _needles() -> tuple[str, str]:
    matcher = RuleMatcher(load_pipeline_config(None).redaction)
    rule = matcher.match(("user_id",))
    user = key_pseudonym(USER, rule.key_type, KEY.encode(), rule.prefix)
    return user, value_token(EMAIL, "EMAIL_ADDRESS", KEY.encode())


def _cases(casegen, indices, subject_ids):
    """Cases; those in ``subject_ids`` hold the subject as redaction left it (pseudonyms)."""
    user, email = _needles()
    cases = []
    for i in indices:
        case = casegen.build_case(i)
        if i == 3:  # the key column
            case = replace(case, user_id=user)
        elif i == 7:  # a placeholder inside a recorded response
            step = replace(case.steps[0], response=json.dumps({"contact": email, "ok": True}))
            case = replace(case, steps=[step, *case.steps[1:]])
        elif i == 12:  # the pseudonym inside free text
            case = replace(case, user_input=f"customer {user} asks about a refund")
        assert (i in subject_ids) == (i in (3, 7, 12))
        cases.append(case)
    return casegen.cases_table(cases)


def _every_file_text(store: StoreFS) -> str:
    parts = []
    for path in store.fs.find(store.root):
        data = store.fs.cat_file(path)
        if path.endswith(".parquet"):
            parts.append(json.dumps(pq.read_table(pa.BufferReader(data)).to_pylist(), default=str))
        else:
            parts.append(data.decode("utf-8", "replace"))
    return "\n".join(parts)


def _erase(target, *args: str):
    return runner.invoke(app, ["erase", "--set", SET, *args, *target.cli_args()])


def test_erasure_removes_the_subject_from_every_retained_version(target, casegen, monkeypatch):
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)

    def publish(table):
        return publish_version(target.url, SET, cases=table, **target.kwargs()).version

    v0 = publish(_cases(casegen, range(100, 105), ()))
    v1 = publish(_cases(casegen, range(0, 10), (3, 7)))
    v2 = publish(_cases(casegen, range(0, 15), (3, 7, 12)))
    v3 = publish(_cases(casegen, range(5, 20), (7, 12)))
    for alias, version in (("old", v0), ("stable", v1), ("candidate", v2)):
        move_alias(store, layout, alias, version)
    before_v3 = {r["case_id"]: r for r in open_set(target.url, f"{SET}@{v3}", **target.kwargs())
                 .read_table().to_pylist()}  # fmt: skip
    user, email = _needles()
    subject_ids = {casegen.build_case(i).case_id for i in (3, 7, 12)}

    dry = _erase(target, "--subject", f"user_id={USER}", "--subject", f"email={EMAIL}", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"{v1}: 2 case(s)" in dry.output and f"{v2}: 3 case(s)" in dry.output
    assert f"{v3}: 2 case(s)" in dry.output and v0 not in dry.output
    assert USER not in dry.output and EMAIL not in dry.output
    assert list_versions(store, SET) == [v0, v1, v2, v3] and not store.exists(log_path(layout))

    done = _erase(target, "--subject", f"user_id={USER}", "--subject", f"email={EMAIL}")
    assert done.exit_code == 0, done.output
    versions = list_versions(store, SET)
    assert versions[:1] == [v0] and len(versions) == 2
    new = versions[1]
    aliases = list_aliases(store, layout)
    assert aliases == {"old": v0, "stable": new, "candidate": new, "latest": new}

    text = _every_file_text(store)
    for needle in (user, email, USER, EMAIL, *subject_ids):
        if needle in subject_ids:  # case ids may stay in the log (what was removed), not data
            assert needle not in text.replace(store.fs.cat_file(store.abs(log_path(layout)))
                                              .decode(), "")  # fmt: skip
        else:
            assert needle not in text, needle

    after = open_set(target.url, f"{SET}@{new}", **target.kwargs())
    rows = {r["case_id"]: r for r in after.read_table().to_pylist()}
    assert set(rows) == set(before_v3) - subject_ids
    assert all(rows[cid] == before_v3[cid] for cid in rows)  # other cases unchanged

    log = [orjson.loads(line) for line in store.read_bytes(log_path(layout)).splitlines()]
    assert log[0]["event"] == "erase" and len(log[0]["subjects"]) == 2
    assert all(len(d) == 64 for d in log[0]["subjects"] + log[0]["needles"])

    # a later run selects the subject's recordings again: the publish leaves them out
    later = publish_version(
        target.url, SET, cases=_cases(casegen, range(0, 20), (3, 7, 12)), **target.kwargs()
    )
    again = open_set(target.url, f"{SET}@{later.version}", **target.kwargs())
    ids = set(again.read_table().column("case_id").to_pylist())
    assert len(ids) == 17 and ids.isdisjoint(subject_ids)
    assert later.manifest["erasure"]["cases_dropped"] == 3


def test_erase_refuses_an_unknown_subject_field_and_a_bad_set_name(target, monkeypatch):
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    unknown = _erase(target, "--subject", "favourite_colour=blue")
    assert unknown.exit_code == 2 and "favourite_colour" in unknown.output
    assert "blue" not in unknown.output
    extra = target.cli_args()
    bad = runner.invoke(app, ["erase", "--set", "nightly\n", "--subject", "user_id=x", *extra])
    assert bad.exit_code == 2 and "not a valid set name" in bad.output


def test_erasure_on_a_signed_store_publishes_a_signed_version(target, casegen, monkeypatch):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from golden_distill.datasets.store.publish import PublishError
    from golden_distill.datasets.store.signing import TRUSTED_KEYS_DIR, public_key_pem
    from golden_distill.datasets.store.verify import verify_version

    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    key = Ed25519PrivateKey.generate()
    store = StoreFS(target.url, target.storage_options)
    store.write_atomic(f"{TRUSTED_KEYS_DIR}/publisher.pem", public_key_pem(key))
    with pytest.raises(PublishError, match="requires signed versions"):  # nothing unreadable
        publish_version(target.url, SET, cases=casegen.make_table(3), **target.kwargs())
    assert list_versions(store, SET) == []

    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    monkeypatch.setenv("GOLDEN_SIGNING_KEY", pem.decode())
    v1 = publish_version(target.url, SET, cases=_cases(casegen, range(0, 10), (3, 7)),
                         **target.kwargs()).version  # fmt: skip
    monkeypatch.delenv("GOLDEN_SIGNING_KEY")
    refused = _erase(target, "--subject", f"user_id={USER}")
    assert refused.exit_code == 2 and "signed" in refused.output
    assert list_versions(store, SET) == [v1] and not store.exists(log_path(SetLayout(SET)))

    monkeypatch.setenv("GOLDEN_SIGNING_KEY", pem.decode())
    done = _erase(target, "--subject", f"user_id={USER}")
    assert done.exit_code == 0, done.output
    (new,) = list_versions(store, SET)
    report = verify_version(store, SET, new)
    assert new != v1 and report.ok and report.signed_by is not None


def test_erasure_republishes_the_decisions_table_without_the_erased_cases(
    target, casegen, monkeypatch
):
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY)
    store = StoreFS(target.url, target.storage_options)
    cases = _cases(casegen, range(0, 10), (3, 7))
    ids = cases.column("case_id").to_pylist()
    erased = {casegen.build_case(i).case_id for i in (3, 7)}
    cut = "c_cut_by_dedup"  # left out in favour of an erased case, and of a kept one
    decisions = pa.table(
        {
            "case_id": [*ids, cut, "c_no_funnel"],
            "status": ["published"] * len(ids) + ["dedup:near", "no_funnel"],
            "replaced_by": [None] * len(ids) + [sorted(erased)[0], None],
        }
    )
    v1 = publish_version(
        target.url, SET, cases=cases, decisions=decisions, **target.kwargs()
    ).version
    done = _erase(target, "--subject", f"user_id={USER}", "--subject", f"email={EMAIL}")
    assert done.exit_code == 0, done.output
    new = list_versions(store, SET)[-1]
    assert new != v1
    table = open_set(target.url, f"{SET}@{new}", **target.kwargs()).decisions()
    assert table is not None  # every version carries its decisions table
    rows = {r["case_id"]: r for r in table.to_pylist()}
    assert erased.isdisjoint(rows) and set(rows) == set(ids) - erased | {cut, "c_no_funnel"}
    assert rows[cut]["status"] == "dedup:near" and rows[cut]["replaced_by"] is None
    assert all(rows[i]["status"] == "published" for i in set(ids) - erased)


def test_needles_are_found_whole_inside_json_text_and_prose():
    from golden_distill.datasets.store.erasure_log import row_tokens

    row = {
        "case_id": "c1",
        "steps": [{"arguments": '{"customer": {"userId": "xq.pw@abc.de"}}', "response": "[1]"}],
        "user_input": "ticket for #W1234567, then <PERSON_0a1b2c3d>.",
    }
    tokens = row_tokens(row)
    assert {"xq.pw@abc.de", "#W1234567", "<PERSON_0a1b2c3d>"} <= tokens
    assert "#W123456" not in tokens  # whole tokens only: a prefix of an id is not a match
