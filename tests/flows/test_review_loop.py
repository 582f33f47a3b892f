"""The human review loop end to end: export a sheet, reject one case and confirm another, run
again with the rejected run recorded a second time under another id (issue 14, point 8)."""

from __future__ import annotations

import csv
import gzip
import json
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.datasets.schema import make_case_id
from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow


def _line_of(source, record_id: str) -> str:
    needle = f'"recordId":"{record_id}"'
    for path in sorted(source.glob("recordings-*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as handle:
            for line in handle:
                if needle in line:
                    return line
    raise AssertionError(f"{record_id} not in the corpus")


def _export_sheet(store, ref: str, sheet) -> list[dict[str, str]]:
    """`golden review export REF --all` into ``sheet``; its rows."""
    out = CliRunner().invoke(
        app, ["review", "export", ref, "--store", str(store), "--out", str(sheet), "--all"]
    )
    assert out.exit_code == 0, out.output
    return list(csv.DictReader(sheet.open()))


def _import_sheet(rows: list[dict[str, str]], sheet, store, set_name: str):
    """Write the edited ``rows`` back to ``sheet`` and `golden review import` it."""
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    imported = CliRunner().invoke(
        app, ["review", "import", str(sheet), "--store", str(store), "--set", set_name]
    )
    assert imported.exit_code == 0, imported.output
    return imported


def test_rejected_case_stays_out_even_recorded_again_and_confirmed_is_human(
    prefect_api, pseudonym_key, corpus, tmp_path
):
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    generated, truth = corpus
    source = tmp_path / "recordings"
    shutil.copytree(generated, source)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]}},
        "curation": {"review": {"require_confirmation": True}},
        "run": {"work_dir": str(tmp_path / "work")},
    }))  # fmt: skip
    store = tmp_path / "store"

    def run() -> str:
        params = DistillParams(
            config_path=str(config), sources=[str(source)], source_format="native",
            store_url=str(store), set_name="rev",
        )  # fmt: skip
        return run_distill(params)

    v1 = run()
    first = open_set(str(store), f"rev@{v1}").read_table().to_pylist()
    assert not [r for r in first if r["split"] == "regression"]  # nobody confirmed anything yet
    sheet = tmp_path / "sheet.csv"
    # generated runs that reached their recorded expected state are `oracle`, not unconfirmed;
    # a first version's cases are all new, so the sheet lists every one (--all changes nothing)
    assert {r["trust"] for r in first} == {"oracle"}
    rows = _export_sheet(store, f"rev@{v1}", sheet)
    assert rows and all(r["exact_hash"] and r["why_review"] for r in rows)
    reject, confirm = rows[0], rows[1]
    reject.update(decision="reject", reason="wrong expected outcome", reviewer="ana")
    confirm.update(decision="confirm", reviewer="ana")
    imported = _import_sheet(rows, sheet, store, "rev")
    assert "recorded 2 decision(s)" in imported.output

    # the rejected run is recorded again under another record id (same content)
    rejected_rid = next(r for r in first if r["case_id"] == reject["case_id"])["source"][
        "source_record_id"
    ]
    again = json.loads(_line_of(source, rejected_rid))
    again["recordId"] = rejected_rid + "-again"
    (source / "recordings-9999.jsonl").write_text(json.dumps(again) + "\n")
    copy_id = make_case_id("native", again["recordId"])

    v2 = run()
    assert v2 != v1  # new decisions make a new version even with the same recordings
    second = {r["case_id"]: r for r in open_set(str(store), f"rev@{v2}").read_table().to_pylist()}
    assert reject["case_id"] not in second and copy_id not in second
    assert second[confirm["case_id"]]["trust"] == "human"
    regression = [r for r in second.values() if r["split"] == "regression"]
    assert [r["case_id"] for r in regression] in ([], [confirm["case_id"]])
    assert all(r["trust"] == "human" for r in regression)

    bad = tmp_path / "bad.csv"
    bad.write_text("case_id,decision,reason,reviewer\nc_1,reject,,ana\n")
    refused = CliRunner().invoke(
        app, ["review", "import", str(bad), "--store", str(store), "--set", "rev"]
    )
    assert refused.exit_code == 2 and "line 2: a rejection needs a reason" in refused.output


def test_a_corrected_expected_state_is_what_replay_asserts(
    prefect_api, pseudonym_key, corpus, tmp_path
):
    """A reviewer corrects one case's expected final state; the next version publishes it as
    ``expected`` (source ``review``, trust ``human``), and replaying that version with the
    re-issuing agent (which ends as recorded) now reports a final-state diff for that case only."""
    import pyarrow.parquet as pq

    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    generated, truth = corpus
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]}},
        "run": {"work_dir": str(tmp_path / "work")},
    }))  # fmt: skip
    store = tmp_path / "store"

    def run() -> str:
        params = DistillParams(
            config_path=str(config), sources=[str(generated)], source_format="native",
            store_url=str(store), set_name="fix",
        )  # fmt: skip
        return run_distill(params)

    v1 = run()
    sheet = tmp_path / "sheet.csv"
    rows = _export_sheet(store, f"fix@{v1}", sheet)
    fixed = next(r for r in rows if r["final_state"])
    corrected_state = "FIN_REFUND_DENIED_AFTER_REVIEW"
    assert corrected_state != fixed["final_state"]
    fixed.update(decision="correct", corrected_final_state=corrected_state, reviewer="ana")
    _import_sheet(rows, sheet, store, "fix")

    v2 = run()
    assert v2 != v1
    published = {
        r["case_id"]: r for r in open_set(str(store), f"fix@{v2}").read_table().to_pylist()
    }
    row = published[fixed["case_id"]]
    assert row["expected"]["final_state"] == corrected_state
    assert row["expected"]["source"] == "review" and row["trust"] == "human"
    others = [r for k, r in published.items() if k != fixed["case_id"]]
    assert others and all((r["expected"] or {}).get("source") != "review" for r in others)

    result = CliRunner().invoke(app, [
        "replay", f"fix@{v2}", "--store", str(store), "--out", str(tmp_path / "replay"),
        "--agent", "golden_distill.datasets.replay.agents:reissue",
    ])  # fmt: skip
    assert result.exit_code == 1, result.output  # the final-state convergence gate fails
    diffs = pq.read_table(tmp_path / "replay" / "regression_diff_result.parquet").to_pylist()
    assert {(d["case_id"], d["diff_type"]) for d in diffs} == {
        (fixed["case_id"], "final_state_diff")
    }


def test_review_decisions_reach_the_cases_an_incremental_run_carries(
    prefect_api, pseudonym_key, corpus, tmp_path
):
    """A nightly run with a window grows the previous version (issue 15): the cases it carries
    over are subject to review too - a rejected one leaves, a corrected one is published with
    the corrected expected state and trust ``human``."""
    from datetime import UTC, datetime

    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    generated, truth = corpus
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]}},
        "selection": {"max_age_days": 36500},
        "run": {"work_dir": str(tmp_path / "work")},
    }))  # fmt: skip
    store = tmp_path / "store"

    def run(since: datetime, until: datetime) -> str:
        params = DistillParams(
            config_path=str(config), sources=[str(generated)], source_format="native",
            store_url=str(store), set_name="inc", since=since, until=until,
        )  # fmt: skip
        return run_distill(params)

    v1 = run(datetime(2000, 1, 1, tzinfo=UTC), datetime(2090, 1, 1, tzinfo=UTC))
    first = {r["case_id"]: r for r in open_set(str(store), f"inc@{v1}").read_table().to_pylist()}
    sheet = tmp_path / "sheet.csv"
    rows = _export_sheet(store, f"inc@{v1}", sheet)
    reject = rows[0]
    fixed = next(r for r in rows[1:] if r["final_state"])
    reject.update(decision="reject", reason="wrong expected outcome", reviewer="ana")
    fixed.update(decision="correct", corrected_final_state="REVIEWED_STATE_X", reviewer="ana")
    _import_sheet(rows, sheet, store, "inc")

    # a later night with no new recordings: every published case is carried over
    v2 = run(datetime(2090, 1, 1, tzinfo=UTC), datetime(2090, 1, 2, tzinfo=UTC))
    second = {r["case_id"]: r for r in open_set(str(store), f"inc@{v2}").read_table().to_pylist()}
    assert reject["case_id"] in first and reject["case_id"] not in second
    assert set(second) == set(first) - {reject["case_id"]}
    row = second[fixed["case_id"]]
    assert row["expected"]["final_state"] == "REVIEWED_STATE_X"
    assert row["expected"]["source"] == "review" and row["trust"] == "human"
    assert all(r["trust"] != "human" for k, r in second.items() if k != fixed["case_id"])
