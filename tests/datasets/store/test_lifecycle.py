"""After publishing: corruption is caught, aliases move, gc keeps aliased versions, diff is exact;
through the Python API and the `golden sets` command line, on a folder and on S3."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import typer
from typer.testing import CliRunner

from golden_distill.datasets.case import Outcome
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import move_alias, read_alias
from golden_distill.datasets.store.diff import diff_sets
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.gc import apply_gc, plan_gc
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.verify import ChecksumError, verify_version
from golden_distill.datasets.store.versions import list_versions
from golden_distill.flows.cli import sets as sets_cli

SET = "nightly"
runner = CliRunner()
app = typer.Typer()  # only this command group: independent of the other groups' imports
sets_cli.register(app)


def _cli(target, *args: str):
    extra = ["--store", target.url]
    if target.storage_options:
        extra += ["--storage-options", json.dumps(target.storage_options)]
    return runner.invoke(app, ["sets", *args, *extra])


def _publish(target, table, **extra):
    return publish_version(target.url, SET, cases=table, **target.kwargs(), **extra)


def _corrupt(store: StoreFS, rel: str) -> None:
    data = bytearray(store.read_bytes(rel))
    data[len(data) // 2] ^= 0x01
    store.write_atomic(rel, bytes(data))


def test_one_corrupt_byte_fails_verify_and_reader_naming_the_file(target, casegen):
    result = _publish(target, casegen.make_table(30), report_html="<html/>")
    store = StoreFS(target.url, target.storage_options)
    assert _cli(target, "verify", f"{SET}@{result.version}").exit_code == 0
    _corrupt(store, SetLayout(SET).version_file(result.version, "cases.parquet"))

    report = verify_version(store, SET, result.version)
    assert not report.ok
    assert len(report.problems) == 1 and "cases.parquet" in report.problems[0]
    assert "sha256" in report.problems[0]

    cli = _cli(target, "verify", f"{SET}@{result.version}")
    assert cli.exit_code == 1 and "cases.parquet" in cli.output

    golden = open_set(target.url, f"{SET}@{result.version}", **target.kwargs())
    with pytest.raises(ChecksumError, match=r"cases\.parquet"):
        next(iter(golden.cases()))
    with pytest.raises(ChecksumError, match=r"cases\.parquet"):
        golden.get(casegen.build_case(3).case_id)
    assert golden.report_html() == b"<html/>"  # the intact file still reads


def test_promote_moves_aliases_and_latest_only_moves_forward(target, casegen):
    v1 = _publish(target, casegen.make_table(10)).version
    v2 = _publish(target, casegen.make_table(11)).version
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    out = _cli(target, "promote", f"{SET}@{v1}", "stable")
    assert out.exit_code == 0, out.output
    assert read_alias(store, layout, "stable") == v1
    assert open_set(target.url, f"{SET}@stable", **target.kwargs()).version == v1
    assert _cli(target, "promote", f"{SET}@latest", "stable").exit_code == 0
    assert read_alias(store, layout, "stable") == v2
    assert move_alias(store, layout, "latest", v1, only_forward=True) == (v2, v2)
    assert read_alias(store, layout, "latest") == v2
    bad = _cli(target, "promote", f"{SET}@2020.01.01.1", "stable")
    assert bad.exit_code == 2 and "not published" in bad.output
    assert _cli(target, "promote", f"{SET}@{v1}", "Not An Alias").exit_code == 2
    listing = _cli(target, "list", SET, "--json")
    rows = json.loads(listing.output)
    assert [r["version"] for r in rows] == [v1, v2]
    assert rows[1]["aliases"] == ["latest", "stable"]


def test_gc_never_deletes_an_aliased_version(target, casegen):
    versions = [_publish(target, casegen.make_table(5 + i)).version for i in range(5)]
    store = StoreFS(target.url, target.storage_options)
    move_alias(store, SetLayout(SET), "stable", versions[0])
    move_alias(store, SetLayout(SET), "candidate", versions[2])

    dry = _cli(target, "gc", SET, "--keep-last", "1", "--keep-days", "0")
    assert dry.exit_code == 0 and "dry run" in dry.output
    assert list_versions(store, SET) == versions  # nothing deleted without --apply

    plan = plan_gc(store, SET, keep_last=1, keep_days=0)
    assert plan.delete == [versions[1], versions[3]]
    assert set(plan.keep) == {versions[0], versions[2], versions[4]}
    assert "stable" in plan.keep[versions[0]] and "candidate" in plan.keep[versions[2]]
    young = plan_gc(store, SET, keep_last=1, keep_days=30)
    assert young.delete == []

    out = _cli(target, "gc", SET, "--keep-last", "1", "--keep-days", "0", "--apply")
    assert out.exit_code == 0, out.output
    remaining = [versions[0], versions[2], versions[4]]
    assert list_versions(store, SET) == remaining
    for version in remaining:
        assert verify_version(store, SET, version).ok
    assert apply_gc(store, plan_gc(store, SET, keep_last=1, keep_days=0)).delete == []


def test_gc_refuses_negative_numbers_and_never_deletes_the_head(target, casegen):
    versions = [_publish(target, casegen.make_table(5 + i)).version for i in range(3)]
    store = StoreFS(target.url, target.storage_options)
    for args in (["--keep-last", "-2"], ["--keep-days", "-1"]):
        out = _cli(target, "gc", SET, *args, "--apply")
        assert out.exit_code == 2 and "greater than or equal to 0" in out.output, out.output
    with pytest.raises(ValueError, match="keep_last must be 0 or more"):
        plan_gc(store, SET, keep_last=-2, keep_days=0)
    assert list_versions(store, SET) == versions

    # keep nothing, and latest's ref lost: the head (newest version) still stays
    store.remove(SetLayout(SET).ref("latest"))
    plan = plan_gc(store, SET, keep_last=0, keep_days=0)
    assert plan.delete == versions[:2] and "head" in plan.keep[versions[2]]
    apply_gc(store, plan)
    assert list_versions(store, SET) == [versions[2]]
    assert verify_version(store, SET, versions[2]).ok


def test_diff_reports_known_differences(target, casegen):
    base = [casegen.build_case(i) for i in range(20)]
    hr_only = casegen.build_case(100, tools=("hr_get_employee",))
    v1 = _publish(target, casegen.cases_table([*base, hr_only])).version

    new = [c for c in base if int(c.trace_id[2:]) >= 5]  # cases 0..4 removed
    new = [replace(c) for c in new]
    changed_outcome = next(c for c in new if c.trace_id == "t-7")
    changed_outcome.outcome = Outcome(status="failed", final_state="X_FAILED", reward=0.0)
    index = next(i for i, c in enumerate(new) if c.trace_id == "t-8")
    new[index] = casegen.build_case(8, tools=("mes_get_work_order",))
    added = [casegen.build_case(i) for i in range(20, 25)]
    v2 = _publish(target, casegen.cases_table(new + added)).version

    golden_a = open_set(target.url, f"{SET}@{v1}", **target.kwargs())
    golden_b = open_set(target.url, f"{SET}@{v2}", **target.kwargs())
    result = diff_sets(golden_a, golden_b)
    assert result.added == sorted(c.case_id for c in added)
    assert result.removed == sorted([*(c.case_id for c in base[:5]), hr_only.case_id])
    assert result.changed == {
        changed_outcome.case_id: ["outcome"],
        new[index].case_id: ["steps"],
    }
    assert result.totals == (21, 20)
    assert result.tools_added == ["mes_get_work_order"] and result.systems_added == ["MES"]
    assert result.tools_lost == ["hr_get_employee"] and result.systems_lost == ["HR"]
    for funnel, (na, nb) in result.funnels.items():
        assert na == golden_a.manifest["counts"]["per_funnel"].get(funnel, 0)
        assert nb == golden_b.manifest["counts"]["per_funnel"].get(funnel, 0)

    out = _cli(target, "diff", f"{SET}@{v1}", f"{SET}@latest", "--json")
    assert out.exit_code == 0, out.output
    shown = json.loads(out.output)
    assert shown["added"] == result.added and shown["removed"] == result.removed
    assert {c["case_id"]: c["changed"] for c in shown["changed"]} == result.changed
    assert shown["coverage"]["tools_lost"] == result.tools_lost
    text = _cli(target, "diff", f"{SET}@{v1}", f"{SET}@{v2}")
    assert "tools lost: hr_get_employee" in text.output
    assert f"{changed_outcome.case_id} (outcome)" in text.output


def test_show_and_list_describe_a_version(target, casegen):
    window = {"since": "2026-11-29T00:00:00+00:00", "until": "2026-11-30T00:00:00+00:00"}
    result = _publish(
        target,
        casegen.make_table(8),
        manifest_fields={"key_id": "k-7", "lineage": {**window, "parent_version": "2026.11.29.1"}},
    )
    shown = _cli(target, "show", SET, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == result.manifest
    text = _cli(target, "show", f"{SET}@{result.version}")
    assert "key_id         k-7" in text.output and "cases.parquet" in text.output
    # the recording window this version read, and what it grew from
    assert (
        "window         2026-11-29T00:00:00+00:00 .. 2026-11-30T00:00:00+00:00 "
        "(recorded_at, until exclusive); grown from 2026.11.29.1"
    ) in text.output
    assert _cli(target, "list").output.split() == [SET]
    missing = _cli(target, "show", "other@latest")
    assert missing.exit_code == 2 and "no such alias" in missing.output
