"""`golden sets why` and `sets show --case` for a case cut by each reason (no_funnel,
dedup:near, quota, redaction refusal, review reject), across versions; a confirmed case moving
to the split it belongs in; `promote --min-trust` and the report agreeing on counts."""

from __future__ import annotations

import csv
import json
import re

import polars as pl
import pyarrow as pa
import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow


def _refusing(refuse: set[str]):
    """``redact_body.redact_candidates`` refusing the cases in ``refuse`` (as the verifier does
    for a value it cannot clear): what this test is about is the record of the refusal."""
    import pyarrow.compute as pc

    from golden_distill.flows.tasks import redact_body

    real = redact_body.redact_candidates

    def redact(candidates, *args, **kwargs):
        table, quarantined, stats, published = real(candidates, *args, **kwargs)
        hit = [c for c in table.column("case_id").to_pylist() if c in refuse]
        if hit:
            table = table.filter(pc.invert(pc.is_in(table.column("case_id"), pa.array(hit))))
            quarantined = {**quarantined, **dict.fromkeys(hit, "residual_pii")}
        return table, quarantined, stats, published

    return redact


def _cli(*args: str):
    result = CliRunner().invoke(app, list(args))
    return result


def _decisions(store, version: str) -> pl.DataFrame:
    return pl.read_parquet(store / "why" / "versions" / version / "decisions.parquet")


@pytest.fixture(scope="module")
def two_versions(prefect_api, corpus, tmp_path_factory):
    """v1: quotas cut, one representative refused by redaction; a reviewer rejects a published
    case and confirms a case the gate held in dev; v2 applies it."""
    from golden_distill.flows.tasks import redact_body

    source, truth = corpus
    tmp = tmp_path_factory.mktemp("why")
    config = tmp / "config.yaml"
    config.write_text(yaml.safe_dump({
        "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]},
                    "quotas": {"max_cases": 40}},
        "curation": {"review": {"require_confirmation": True}},
        "run": {"work_dir": str(tmp / "work")},
    }))  # fmt: skip
    store = tmp / "store"
    patch = pytest.MonkeyPatch()
    patch.setenv("GOLDEN_PSEUDONYM_KEY", "why-test-pseudonym-key-0123456789abcdef0123456789")
    ids_file = tmp / "ids.txt"
    preview = _cli("preview", "--config", str(config), "--format", "native", "--ids-out",
                   str(ids_file), str(source))  # fmt: skip
    assert preview.exit_code == 0, preview.output
    refused = sorted(ids_file.read_text().split())[0]
    patch.setattr(redact_body, "redact_candidates", _refusing({refused}))
    run = ["run", "--local", "--config", str(config), "--source", str(source), "--format",
           "native", "--store", str(store), "--set", "why"]  # fmt: skip
    first = _cli(*run)
    assert first.exit_code == 0, first.output
    v1 = re.search(r"published version: (\S+)", first.output).group(1)
    d1 = _decisions(store, v1)
    published = d1.filter(pl.col("status") == "published")
    held = published.filter(pl.col("held_from") == "regression")["case_id"].to_list()
    rejected = published.filter(pl.col("held_from").is_null())["case_id"][0]
    sheet = tmp / "sheet.csv"
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["case_id", "decision", "reason", "reviewer"])
        writer.writeheader()
        writer.writerow({"case_id": rejected, "decision": "reject",
                         "reason": "expected outcome is wrong", "reviewer": "ana"})  # fmt: skip
        for case_id in held[:2]:
            writer.writerow({"case_id": case_id, "decision": "confirm", "reviewer": "ana"})
    imported = _cli("review", "import", str(sheet), "--store", str(store), "--set", "why")
    assert imported.exit_code == 0, imported.output
    second = _cli(*run)
    assert second.exit_code == 0, second.output
    v2 = re.search(r"published version: (\S+)", second.output).group(1)
    patch.undo()
    return {"store": store, "v1": v1, "v2": v2, "refused": refused, "rejected": rejected,
            "confirmed": held[:2], "held": held}  # fmt: skip


def _why(store, case_id: str) -> str:
    result = _cli("sets", "why", case_id, "--set", "why", "--store", str(store))
    assert result.exit_code == 0, result.output
    return result.output


def test_why_for_each_reason(two_versions) -> None:
    store, v1 = two_versions["store"], two_versions["v1"]
    d1 = _decisions(store, v1)
    statuses = set(d1["status"].to_list())
    assert {"published", "no_funnel", "dedup:near", "redaction:residual_pii"} <= statuses
    assert any(s.startswith("quota:") for s in statuses)
    assert any(s.startswith("gate:") for s in statuses)  # the opted-out tenant
    for status in ("no_funnel", "dedup:near", "quota:", "gate:"):
        row = d1.filter(pl.col("status").str.starts_with(status)).row(0, named=True)
        out = _why(store, row["case_id"])
        assert f"{v1}  {row['status']}" in out, out
        assert "no version of this set" not in out
    near = d1.filter((pl.col("status") == "dedup:near") & pl.col("replaced_by").is_not_null()).row(
        0, named=True
    )
    out = _why(store, near["case_id"])
    assert f"published in its place: {near['replaced_by']}" in out
    assert d1.filter(pl.col("case_id") == near["replaced_by"])["status"][0] == "published"
    refused = two_versions["refused"]
    out = _why(store, refused)
    assert "redaction:residual_pii: redaction refused it" in out
    row = d1.filter(pl.col("case_id") == refused).row(0, named=True)
    if row["replaced_by"]:  # the next member of its cluster took its place
        assert f"published in its place: {row['replaced_by']}" in out
    unknown = _why(store, "c_000000000000000000000000")
    assert "no version of this set read or published this case" in unknown


def test_rejected_case_left_and_show_case_answers(two_versions) -> None:
    store, v1, v2 = two_versions["store"], two_versions["v1"], two_versions["v2"]
    rejected = two_versions["rejected"]
    out = _why(store, rejected)
    assert f"{v1}  published" in out and f"{v2}  review:rejected" in out
    assert f"first published in {v1}" in out and f"left the set in {v2}" in out
    assert "rejected by ana: expected outcome is wrong" in out
    shown = _cli("sets", "show", f"why@{v2}", "--case", rejected, "--store", str(store))
    assert shown.exit_code == 0, shown.output
    assert "not in this version: review:rejected" in shown.output
    as_json = _cli("sets", "why", rejected, "--set", "why", "--store", str(store), "--json")
    report = json.loads(as_json.output)
    assert report["left"]["version"] == v2 and report["left"]["status"] == "review:rejected"


def test_confirmed_case_moves_to_the_split_it_belongs_in(two_versions) -> None:
    from golden_distill.datasets.reader import open_set

    store, v1, v2 = two_versions["store"], two_versions["v1"], two_versions["v2"]
    assert len(two_versions["confirmed"]) == 2
    first = pl.from_arrow(open_set(str(store), f"why@{v1}").read_table())
    second = pl.from_arrow(open_set(str(store), f"why@{v2}").read_table())
    for case_id in two_versions["confirmed"]:
        assert first.filter(pl.col("case_id") == case_id)["split"][0] == "dev"
        moved = second.filter(pl.col("case_id") == case_id)
        assert moved["split"][0] == "regression" and moved["trust"][0] == "human"
    still = [c for c in two_versions["held"] if c not in two_versions["confirmed"]]
    d2 = _decisions(store, v2)
    for case_id in still:  # not confirmed: still held, still known to belong in regression
        assert second.filter(pl.col("case_id") == case_id)["split"][0] == "dev"
        assert d2.filter(pl.col("case_id") == case_id)["held_from"][0] == "regression"


def test_promote_min_trust_and_the_report_agree(two_versions) -> None:
    from golden_distill.datasets.reader import open_set

    store, v2 = two_versions["store"], two_versions["v2"]
    golden = open_set(str(store), f"why@{v2}")
    html = (golden.report_html() or b"").decode()
    assert f"version {v2}" in html or f"<td>{v2}</td>" in html  # the report names its version
    cases = pl.from_arrow(golden.read_table())
    regression = cases.filter(pl.col("split") == "regression")
    assert regression.height == 2  # the two confirmed cases, and only they
    assert '<td>regression</td><td>human</td><td class="n">2</td>' in html
    for minimum in ("oracle", "human"):
        counted = re.search(rf"(\d+) regression case\(s\) trusted less than {minimum}", html)
        assert counted, html[:2000]
        weak = int(counted.group(1))
        promoted = _cli("sets", "promote", f"why@{v2}", f"s-{minimum}", "--store", str(store),
                        "--min-trust", minimum)  # fmt: skip
        assert weak == 0 and promoted.exit_code == 0, promoted.output
    v1 = two_versions["v1"]
    html1 = (open_set(str(store), f"why@{v1}").report_html() or b"").decode()
    first = pl.from_arrow(open_set(str(store), f"why@{v1}").read_table())
    held = int(re.search(r"(\d+) case\(s\) held in dev by the confirmation gate", html1).group(1))
    assert held == len(two_versions["held"]) > 0
    assert first.filter(pl.col("split") == "regression").height == 0  # nobody confirmed yet
