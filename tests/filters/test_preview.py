"""`golden preview`: counts, overlaps, breakdowns, examples, config diff; never personal data."""

from __future__ import annotations

import json

import pytest
from two_phase import decide as decide_selection
from typer.testing import CliRunner

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.preview import config_changes, diff_report, preview_report
from golden_distill.filters.runner import score_cases
from golden_distill.flows.cli import app


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from golden_distill.synthetic import generate_corpus, load_truth

    root = tmp_path_factory.mktemp("preview")
    generate_corpus(root / "rec", sessions=300, seed=5)
    truth = load_truth(root / "rec")
    tuned = root / "tuned.yaml"
    tuned.write_text(
        "funnels:\n  high_value_mutating:\n    amount_threshold: 5000\n"
        f"  redacted:\n    opt_out_tenants: [{truth.opt_out_tenant}]\n"
        "  quotas:\n    per_tenant_max: 20\n"
    )
    return root, truth, tuned


def _personal_values(truth) -> set[str]:
    values = {v for r in truth.records.values() for _, v, _ in r.pii}
    return {v for v in values if len(v) >= 5}


def test_preview_json_reports_counts_and_never_personal_data(generated):
    root, truth, tuned = generated
    result = CliRunner().invoke(
        app, ["preview", "--config", str(tuned), "--json", str(root / "rec")]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    p = report["preview"]
    assert p["cases"] == truth.valid_records
    assert 0 < p["selected"] <= p["candidates"] < p["cases"]
    assert sum(r["selected"] for r in p["by_tenant"]) <= p["selected"]
    assert max(r["selected"] for r in p["by_tenant"]) <= 20
    # candidates are deduplicated first, then the quotas cut representatives
    cut = p["quota_cuts"]["quota:tenant_max"]
    assert cut > 0 and p["dedup"]["removed"] > 0
    assert cut + p["dedup"]["removed"] == p["candidates"] - p["selected"]
    assert p["dropped"]["gate:tenant_opted_out"] > 0
    for funnel in ("high_value_mutating", "recovery", "human_handoff"):
        assert p["funnels"][funnel]["members"] >= p["funnels"][funnel]["selected"] > 0
        assert p["examples"][funnel] and all(e["reason"] for e in p["examples"][funnel])
    assert report["ingest"]["quarantined"]  # the planted broken lines, by reason code
    personal = _personal_values(truth)
    assert len(personal) > 100  # the check below has something to find
    assert [v for v in personal if v in result.output] == []


def test_preview_against_shows_entering_and_leaving(generated):
    root, truth, tuned = generated
    runner = CliRunner()
    text = runner.invoke(
        app,
        ["preview", "--config", str(tuned), "--against", "configs/nightly.yaml", str(root / "rec")],
    )
    assert text.exit_code == 0, text.output
    assert "entering:" in text.output and "leaving:" in text.output
    assert "funnels.high_value_mutating.amount_threshold: 5000.0 (against: 10000.0)" in text.output
    assert "wall" in text.output
    assert not [v for v in _personal_values(truth) if v in text.output]


def test_against_compares_whole_configs_ingest_and_dedup_included(generated, tmp_path):
    root, _, tuned_capped = generated
    # tenants partition dedup: a cap of 20 per tenant would fill under either threshold
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text(tuned_capped.read_text().replace("per_tenant_max: 20", "per_tenant_max: 60"))
    other = tmp_path / "other.yaml"
    other.write_text(
        tuned.read_text()
        + "ingest:\n  malformed_arguments: keep_as_string\n"
        + "dedup:\n  distance_threshold: 0.2\n"
    )
    result = CliRunner().invoke(
        app,
        ["preview", "--json", "--config", str(tuned), "--against", str(other), str(root / "rec")],
    )
    assert result.exit_code == 0, result.output
    diff = json.loads(result.output)["diff"]
    keys = {c["key"] for c in diff["config_changes"]}
    assert {"ingest.malformed_arguments", "dedup.distance_threshold"} <= keys
    # a tighter threshold splits clusters: more cases selected, some stand for smaller clusters
    assert diff["selected"]["against"] > diff["selected"]["config"]
    assert diff["cluster_changes"]["cluster_size_changed"] > 0
    assert (
        diff["entering"]["count"] + diff["selected"]["against"] - diff["leaving"]["count"]
        == (diff["selected"]["config"])
    )


def test_diff_report_explains_moves(build):
    s = build.step
    frame = build.frame(
        [
            build.case("mid_amount", [s(0, "erp_w", write=True, args={"amount": 7000})]),
            build.case("big_amount", [s(0, "erp_w", write=True, args={"amount": 70000})]),
            build.case("handoff", [s(0, "handoff_to_human")], tenant="t-out"),
        ]
    )
    base = FunnelsConfig()
    tuned = FunnelsConfig()
    tuned.high_value_mutating.amount_threshold = 5000
    tuned.redacted.opt_out_tenants = ["t-out"]
    a = decide_selection(score_cases(frame, tuned, details=True), tuned)
    b = decide_selection(score_cases(frame, base, details=True), base)
    diff = diff_report(a, b, tuned, base)
    assert diff["selected"] == {"config": 2, "against": 2}
    assert diff["entering"]["count"] == 1
    assert diff["entering"]["status_under_against"] == {"no_funnel": 1}
    entering = diff["entering"]["examples"][0]
    assert entering["case_id"] == "mid_amount"
    assert entering["reasons"]["high_value_mutating"].endswith("amount 7,000.00 >= 5,000")
    assert diff["leaving"]["status_under_config"] == {"gate:tenant_opted_out": 1}
    assert diff["membership_changes"]["high_value_mutating"] == {"gained": 1, "lost": 0}
    assert {c["key"] for c in diff["config_changes"]} == {
        "funnels.high_value_mutating.amount_threshold",
        "funnels.redacted.opt_out_tenants",
    }


def test_preview_report_breakdowns(build):
    s = build.step
    frame = build.frame(
        [build.case(f"c{i}", [s(0, "erp_w", write=True), s(1, "mes_w", write=True)],
                    tenant=f"t{i % 2}") for i in range(6)]
    )  # fmt: skip
    cfg = FunnelsConfig()
    cfg.quotas.max_cases = 4
    report = preview_report(
        decide_selection(score_cases(frame, cfg, details=True), cfg), cfg, examples=2
    )
    assert report["quota_cuts"] == {"quota:max_cases": 2}
    assert {r["name"]: r["selected"] for r in report["by_system"]} == {"ERP": 4, "MES": 4}
    assert sum(r["cases"] for r in report["by_tenant"]) == 6
    assert len(report["examples"]["high_value_mutating"]) == 2
    assert report["combinations"] == {"high_value_mutating": 6}


def test_config_changes_are_dotted_paths():
    a = {"x": {"y": 1, "z": [1]}, "w": 2}
    b = {"x": {"y": 2, "z": [1]}, "w": 2}
    assert config_changes(a, b) == [{"key": "x.y", "config": 1, "against": 2}]


def test_preview_errors_are_clear(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("funnels:\n  recovery:\n    recover_whitin_steps: 3\n")
    result = CliRunner().invoke(app, ["preview", "--config", str(bad), str(tmp_path)])
    assert result.exit_code == 2
    assert "did you mean recover_within_steps?" in result.output
    result = CliRunner().invoke(app, ["preview", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such source" in result.output
    assert "Traceback" not in result.output


def test_sample_is_seeded(generated):
    root, _, _ = generated
    args = ["preview", "--json", "--sample", "50", str(root / "rec")]
    first = json.loads(CliRunner().invoke(app, args).output)["preview"]
    second = json.loads(CliRunner().invoke(app, args).output)["preview"]
    assert first["cases"] == 50
    assert first["examples"] == second["examples"] and first["funnels"] == second["funnels"]
