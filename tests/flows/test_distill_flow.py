"""The `distill` flow end to end on generated recordings, with the real libraries and Prefect.

One corpus, several runs in sequence (each run costs seconds, so they share a test):
first run publishes exactly the expected cases with no planted personal value anywhere in the
store; an unchanged rerun takes every shard from the cache; a broken shard has its bad lines
quarantined, only that shard is redone, and the run still publishes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.datasets.schema import make_case_id

pytestmark = pytest.mark.slow


def expected_families(truth, opt_out: str, refused: set[str]) -> dict[str, set[str]]:
    """family -> case ids of its members that the funnels select (quotas off) and redaction
    accepts (a refused representative is replaced by the next member of its cluster)."""
    lost = set(truth.lost_record_ids)
    out: dict[str, set[str]] = {}
    for rid, record in truth.records.items():
        if rid in lost or record.tenant_id == opt_out or not record.funnels:
            continue
        if make_case_id("native", rid) in refused:
            continue
        out.setdefault(record.family, set()).add(make_case_id("native", rid))
    return out


def store_text(store: Path) -> str:
    """Every byte of the store as text, Parquet files decoded (they are compressed on disk)."""
    parts = []
    for path in sorted(p for p in store.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            parts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
        else:
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def test_distill_end_to_end(
    prefect_api, pseudonym_key, corpus, tmp_path, events, shard_events, write_config
):
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    generated, truth = corpus
    source = tmp_path / "recordings"  # a copy: this test breaks one of its files
    shutil.copytree(generated, source)
    opt_out = truth.opt_out_tenant
    config = write_config(tmp_path / "config.yaml", opt_out)
    store = tmp_path / "store"
    params = DistillParams(
        config_path=str(config),
        sources=[str(source)],
        source_format="native",  # the planted truncated .gz is too short to sniff
        store_url=str(store),
        set_name="e2e",
    )

    # 1. first run: exactly the expected cases, nothing personal anywhere in the store
    version = run_distill(params)
    golden = open_set(str(store), f"e2e@{version}")
    published = set(golden.read_table().column("case_id").to_pylist())
    work = tmp_path / "work" / "sets" / "e2e"  # each set has its own work folder
    refusals = [
        e for q in work.rglob("quarantine.jsonl") for e in read_quarantine(q)
        if e["stage"] == "redaction"
    ]  # fmt: skip
    families = expected_families(truth, opt_out, {e["case_id"] for e in refusals})
    family_of = {cid: fam for fam, ids in families.items() for cid in ids}
    assert published <= set(family_of), "published a case no funnel should select"
    # planted families span tenants and outcomes; dedup never merges different work (task,
    # outcome, tenant: the signature's work key), so one case per family and work
    work_of = {
        cid: key
        for part in work.rglob("signatures.parquet")
        for cid, key in pl.read_parquet(part, columns=["case_id", "work_key"]).iter_rows()
    }
    represented = [(family_of[cid], work_of[cid]) for cid in published]
    assert len(represented) == len(set(represented)), "two cases of one family and work"
    assert {f for f, _ in represented} == set(families), "a family with selected cases is missing"

    text = store_text(store)
    leaked = [etype for r in truth.records.values() for etype, value, _ in r.pii if value in text]
    assert not leaked, f"planted personal values found in the store: {sorted(set(leaked))}"
    report = store / "e2e" / "versions" / version / "report.html"
    assert report.is_file() and "<svg" in report.read_text()
    assert all(not d["cached"] for d in shard_events(events))

    # Prefect artifacts: the run summary (markdown a browser shows) and the counts table, keyed
    # per store and set, nothing personal
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from golden_distill.flows.report.artifact import artifact_key

    summary_key = artifact_key(str(store), "e2e")
    counts_key = artifact_key(str(store), "e2e", "counts")
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[summary_key, counts_key]))
        )
    by_key = {a.key: a for a in found}
    summary = str(by_key[summary_key].data)
    assert by_key[summary_key].type == "markdown"
    assert f"e2e@{version}" in summary and str(report) in summary
    assert f"| published cases | **{len(published):,}** |" in summary
    assert "The set's first version." in summary
    counts = json.dumps(by_key[counts_key].data)
    assert "records read" in counts and "removed by dedup" in counts
    pii = [value for r in truth.records.values() for _, value, _ in r.pii]
    assert not [value for value in pii if value in counts or value in summary]

    # planted broken lines are quarantined with their location
    quarantined = [
        e for q in (tmp_path / "work").rglob("quarantine.jsonl") for e in read_quarantine(q)
    ]
    planted = {(Path(b["file"]).name, b["line"]) for b in truth.broken_lines}
    seen = {(Path(e["uri"]).name, e["position"]) for e in quarantined}
    assert planted <= seen

    # 2. rerun with nothing changed: every shard from the cache, same content -> same version;
    # the cached selection's frames are in the work folder (flows/tasks/frame_ref.py): one
    # removed since, the selection is recomputed, not read half
    (spilled,) = work.glob("shards/selection-*/decisions.parquet")
    spilled.unlink()
    events.clear()
    assert run_distill(params) == version
    assert spilled.is_file()
    done = shard_events(events)
    shards = len(list(source.glob("recordings-*")))
    assert len(done) == shards and all(d["cached"] for d in done)
    redacts = shard_events(events, "redact_done")
    assert redacts and all(d["cached"] for d in redacts)
    assert not shard_events(events, "recomputed")  # every cached result's files were there
    # ... and `golden run` can tell before starting Prefect (flows/run_key.py)
    from golden_distill.flows.preflight import preflight
    from golden_distill.flows.run_key import unchanged_latest

    assert unchanged_latest(preflight(params)) == (version, str(report))
    assert unchanged_latest(preflight(params.model_copy(update={"force": True}))) is None

    # 3. one broken shard: its bad lines are quarantined, only it is redone, still publishes
    events.clear()
    broken = sorted(source.glob("recordings-*.jsonl"))[0]
    with broken.open("ab") as fh:
        fh.write(b'{"recordId": "bad-1", "sessionId": \n')  # invalid JSON
        fh.write(b'{"sessionId": "s-x", "toolCalls": []}\n')  # required fields missing
    lines = sum(1 for _ in broken.open("rb"))
    assert unchanged_latest(preflight(params)) is None  # a changed shard: the flow must run
    forced = params.model_copy(update={"force": True})
    new_version = run_distill(forced)
    assert new_version != version
    done = shard_events(events)
    assert sorted(d["cached"] for d in done) == [False] + [True] * (shards - 1)
    redone = [d["shard"] for d in shard_events(events, "redact_done") if not d["cached"]]
    assert set(redone) == {broken.name}  # (one task per redaction round)
    bad = {
        e["position"]
        for q in (tmp_path / "work").rglob("quarantine.jsonl")
        for e in read_quarantine(q)
        if Path(e["uri"]).name == broken.name
    }
    assert {lines - 1, lines} <= bad
    again = set(
        open_set(str(store), f"e2e@{new_version}").read_table().column("case_id").to_pylist()
    )
    assert again == published

    # every planted value is one the default redaction can handle: nothing should be refused
    reasons = sorted({(e["reason"], e["detail"]) for e in refusals})
    assert not refusals, f"redaction refused {len(refusals)} selected case(s): {reasons}"


def test_invalid_parameters_fail_before_any_work(prefect_api, tmp_path, events, shard_events):
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.errors import find_stage_error
    from golden_distill.flows.params import DistillParams

    bad = tmp_path / "bad.yaml"
    bad.write_text("funnels:\n  recovery:\n    recover_whitin_steps: 3\n")
    with pytest.raises(Exception) as info:
        run_distill(DistillParams(config_path=str(bad), sources=[str(tmp_path)]))
    stage = find_stage_error(info.value)
    assert stage is not None and stage.stage == "validate"
    assert "recover_whitin_steps" in stage.detail
    assert not shard_events(events)


def test_golden_run_names_the_failing_stage_and_exits_non_zero(
    prefect_api, pseudonym_key, tmp_path
):
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    runner = CliRunner()
    bad_window = runner.invoke(
        app, ["run", "--source", str(tmp_path), "--since", "2026-11-29", "--until", "2026-11-28"]
    )
    assert bad_window.exit_code == 2
    assert "stage 'validate'" in bad_window.output and "since" in bad_window.output

    nothing = runner.invoke(app, ["run", "--config", str(_config_without_sources(tmp_path))])
    assert nothing.exit_code == 2  # a usage error, like every config error
    assert "stage 'validate'" in nothing.output and "no sources: pass --source" in nothing.output

    missing = runner.invoke(app, ["run", "--source", str(tmp_path / "nope")])
    assert missing.exit_code == 1
    assert "stage 'discover'" in missing.output and "no such file" in missing.output
    assert "Traceback" not in missing.output

    help_text = runner.invoke(app, ["run", "--help"])
    assert help_text.exit_code == 0 and "Example" in help_text.output


def _config_without_sources(folder: Path) -> Path:
    path = folder / "no-sources.yaml"
    path.write_text("run:\n  sources: []\n")
    return path
