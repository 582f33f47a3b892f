"""The tau-bench profile end to end on the 400 vendored runs: what gets published, how each case
says why, trust tiers, splits that stay put across versions, and promotion by trust."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import polars as pl
import pytest
import yaml
from golden_test_data import all_runs_paths
from typer.testing import CliRunner

from golden_distill.filters.trust import trust_expr
from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow

PROFILE = Path(__file__).resolve().parents[2] / "configs" / "tau-bench.yaml"


def _config(tmp_path: Path, name: str, **dedup: object) -> Path:
    raw = yaml.safe_load(PROFILE.read_text())
    raw["ingest"]["tool_catalogues"] = [str(PROFILE.parent / "tools" / "tau-bench.yaml")]
    raw["dedup"].update(dedup)
    raw["run"] = {"work_dir": str(tmp_path / "work")}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture(scope="module")
def published(prefect_api, tmp_path_factory):
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    tmp = tmp_path_factory.mktemp("tau-curation")
    store = tmp / "store"
    versions = []
    patch = pytest.MonkeyPatch()
    patch.setenv(
        "GOLDEN_PSEUDONYM_KEY", "tau-curation-test-key-5b8e1f4a9c2d7e3b6a0f8d1c4e7b2a9f5d3c6e8a"
    )
    # second version: a tighter threshold splits some clusters; splits must not move
    for name, dedup in (("first.yaml", {}), ("second.yaml", {"distance_threshold": 0.3})):
        params = DistillParams(
            config_path=str(_config(tmp, name, **dedup)),
            sources=[str(p) for p in all_runs_paths()],
            source_format="chat",
            store_url=str(store),
            set_name="tau",
        )
        versions.append(run_distill(params))
    patch.undo()
    sets = [open_set(str(store), f"tau@{v}") for v in versions]
    return store, versions, [pl.from_arrow(s.read_table()) for s in sets], sets


def test_published_set_is_mostly_successful_runs_with_writes(published):
    _, _, (first, _), sets = published
    reward = first["outcome"].struct.field("reward")
    assert first.height > 100
    assert (reward == 1).sum() > 0.85 * first.height  # mostly successful runs
    hv = first.filter(pl.col("funnels").list.contains("high_value_mutating"))
    assert hv.height > first.height / 2
    assert (hv["outcome"].struct.field("reward") == 1).all()  # no failed run's writes
    handoff = first.filter(pl.col("funnels").list.contains("human_handoff")).height
    assert handoff <= 0.3 * first.height  # the profile's cap, a fraction of the final set
    assert first.filter(pl.col("funnels").list.contains("recovery")).height > 5
    assert sets[0].manifest["stats"]["quarantined"] == {}  # think arguments read, not lost


def test_every_failed_run_is_unconfirmed_and_every_rewarded_one_oracle(published):
    _, _, (first, _), _ = published
    reward = first["outcome"].struct.field("reward")
    failed = first.filter(reward <= 0)
    assert failed.height > 0  # hand-offs of failed runs are still worth a look
    # a failed run is oracle only because its expected outcome is the task's, not the run's
    source = failed["expected"].struct.field("source").to_list()
    assert source == ["tau_bench_task"] * failed.height
    assert set(failed["trust"].to_list()) == {"oracle"}
    # without the task's expected outcome, every failed run would be unconfirmed
    bare = first.drop("expected").with_columns(trust=trust_expr(first.drop("expected")))
    assert set(bare.filter(reward <= 0)["trust"].to_list()) == {"unconfirmed"}
    assert set(first.filter(reward >= 1)["trust"].to_list()) == {"oracle"}


def test_splits_by_cluster_and_sticky_across_versions(published):
    _, _, (first, second), _ = published
    assert set(first["split"].unique().to_list()) == {"dev", "regression", "holdout"}
    share = (first["split"] == "regression").mean()
    assert 0.45 < share < 0.75  # 0.6 configured
    before = dict(zip(first["case_id"], first["split"], strict=True))
    after = dict(zip(second["case_id"], second["split"], strict=True))
    common = set(before) & set(after)
    assert len(common) > 100 and len(after) > len(before)  # the tighter threshold adds cases
    assert all(before[c] == after[c] for c in common)


def test_report_explains_every_case_and_lists_cluster_members(published):
    _, _, (first, _), sets = published
    html = (sets[0].report_html() or b"").decode()
    for case_id, reasons in zip(first["case_id"], first["funnel_reasons"], strict=True):
        assert case_id in html
        for funnel, reason in json.loads(reasons).items():
            if funnel != "redacted":  # the gate's "passed" note is not a reason to be in
                assert escape(reason) in html
    stats = sets[0].manifest["stats"]
    largest = stats["largest_clusters"]
    assert largest and all(len(c["members"]) == c["size"] for c in largest)
    for cluster in largest:  # every member, kept or removed, is listed with its outcome
        for member in cluster["members"]:
            assert member["case_id"] in html and member["outcome"]
    assert "Candidates not published, per reason" in html and "dedup: a member" in html
    shares = stats["shares"]["funnel"]["human_handoff"]
    assert shares["cap"] == 0.3 and shares["share"] <= 0.3


def test_reasons_case_view_and_promotion_by_trust(published):
    store, versions, (first, _), _ = published
    reasons = [json.loads(r) for r in first["funnel_reasons"]]
    assert all(r for r in reasons)
    case = first.filter(pl.col("cluster_size") > 1)["case_id"][0]
    shown = CliRunner().invoke(
        app, ["sets", "show", f"tau@{versions[0]}", "--case", case, "--store", str(store)]
    )
    assert shown.exit_code == 0, shown.output
    assert "why " in shown.output and "representative" in shown.output
    assert versions[0] in shown.output and versions[1] in shown.output  # its history
    # every tau-bench case has an oracle (reward or the task's expected outcome), none a human
    refused = CliRunner().invoke(
        app,
        ["sets", "promote", f"tau@{versions[0]}", "stable", "--store", str(store),
         "--min-trust", "human"],
    )  # fmt: skip
    weak = first.filter((pl.col("split") == "regression") & (pl.col("trust") != "human"))
    assert weak.height > 0
    assert refused.exit_code == 1 and "regression split" in refused.output
    allowed = CliRunner().invoke(
        app,
        ["sets", "promote", f"tau@{versions[0]}", "stable", "--store", str(store),
         "--min-trust", "oracle"],
    )  # fmt: skip
    assert allowed.exit_code == 0, allowed.output


def test_diff_shows_the_config_change_changed_clusters_and_drift(published):
    store, versions, (first, second), _ = published
    out = CliRunner().invoke(
        app,
        ["sets", "diff", f"tau@{versions[0]}", f"tau@{versions[1]}", "--store", str(store),
         "--format", "json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    keys = {c["key"]: (c["a"], c["b"]) for c in report["config_changes"]}
    assert keys["dedup.distance_threshold"] == (0.55, 0.3)
    assert len(report["added"]) == second.height - first.height + len(report["removed"])
    # the tighter threshold split clusters: only cluster sizes (and what follows) changed
    assert report["changed"] and len(report["changed"]) < first.height / 2
    for case in report["changed"]:
        assert "steps" not in case["changed"] and "source" not in case["changed"]
    assert any("cluster_size" in c["detail"] for c in report["changed"])
    assert report["drift"] and abs(report["drift"][0]["shift"]) >= abs(report["drift"][-1]["shift"])
    markdown = CliRunner().invoke(
        app,
        ["sets", "diff", f"tau@{versions[0]}", f"tau@{versions[1]}", "--store", str(store),
         "--format", "markdown"],
    )  # fmt: skip
    assert markdown.exit_code == 0 and "## Drift" in markdown.output


def test_nightly_report_has_drift_and_coverage_gap_against_the_pinned_version(published):
    _, versions, _, sets = published
    stats = sets[1].manifest["stats"]
    assert stats["pinned"] == versions[0]
    assert stats["drift"] and {"dimension", "value", "before", "after", "shift"} <= set(
        stats["drift"][0]
    )
    gap = stats["coverage_gap"]
    assert gap["candidates"] == stats["candidates"]
    assert 0 <= gap["uncovered_cases"] <= gap["candidates"]
    html = (sets[1].report_html() or b"").decode()
    assert "Drift against the pinned version" in html and "Coverage gap: this run" in html
    assert "pinned" not in sets[0].manifest["stats"]  # the first version has nothing to drift from
