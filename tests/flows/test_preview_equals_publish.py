"""`golden preview` selects exactly what `golden run` publishes (redaction aside): the same
funnels, dedup clustering and quotas over representatives, on the generated demo-style corpus."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.datasets.quarantine import read_quarantine
from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow


def test_preview_ids_equal_published_ids(prefect_api, pseudonym_key, corpus, tmp_path):
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    source, truth = corpus
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "funnels": {
                    "redacted": {"opt_out_tenants": [truth.opt_out_tenant]},
                    "quotas": {"per_tenant_max": 0.3, "per_funnel_max": {"recovery": 0.25}},
                },
                "run": {"work_dir": str(tmp_path / "work")},
            }
        )
    )
    ids_file = tmp_path / "preview-ids.txt"
    result = CliRunner().invoke(
        app,
        ["preview", "--config", str(config), "--format", "native", "--ids-out", str(ids_file),
         str(source)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    previewed = set(ids_file.read_text().split())

    store = tmp_path / "store"
    version = run_distill(
        DistillParams(
            config_path=str(config),
            sources=[str(source)],
            source_format="native",
            store_url=str(store),
            set_name="same",
        )
    )
    published = set(open_set(str(store), f"same@{version}").read_table()["case_id"].to_pylist())
    refused = {
        e["case_id"]
        for q in (tmp_path / "work").rglob("quarantine.jsonl")
        for e in read_quarantine(q)
        if e.get("stage") == "redaction"
    }
    assert len(published) > 20
    # Redaction is the only step preview leaves out: a refused representative is replaced by
    # the next member of its cluster. Everything else is identical.
    assert previewed - refused == published - (published - previewed)
    assert len(published - previewed) <= len(refused)
    if not refused:
        assert previewed == published
    clusters = pq.read_table(store / "same" / "versions" / version / "clusters.parquet")
    assert clusters.num_rows >= len(published)


def _refusing(refuse: set[str]):
    """``redact_body.redact_candidates`` refusing the cases in ``refuse`` after redacting them
    (as the verifier does for a value it cannot clear): the flow's accounting is what this
    test is about, not why redaction refuses."""
    import pyarrow.compute as pc

    from golden_distill.flows.tasks import redact_body

    real = redact_body.redact_candidates

    def redact(candidates, *args, **kwargs):
        table, quarantined, stats, published = real(candidates, *args, **kwargs)
        ids = table.column("case_id").to_pylist()
        hit = [c for c in ids if c in refuse]
        if hit:
            table = table.filter(pc.invert(pc.is_in(table.column("case_id"), pa.array(hit))))
            quarantined = {**quarantined, **dict.fromkeys(hit, "test:refused")}
            reasons = dict(stats.get("redaction_quarantined") or {})
            reasons["test:refused"] = reasons.get("test:refused", 0) + len(hit)
            stats = {**stats, "redaction_quarantined": reasons}
        return table, quarantined, stats, published

    return redact


def test_refused_cases_are_replaced_or_their_cluster_is_reported_lost(
    prefect_api, pseudonym_key, corpus, tmp_path, monkeypatch
):
    """Counts that match: selected = published + lost (- admitted), replaced counted, in the
    manifest, the report and `golden run`'s console; a refused representative with another
    member is replaced, a refused singleton's cluster is lost."""
    import json

    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.tasks import redact_body

    source, truth = corpus
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]}},
                "run": {"work_dir": str(tmp_path / "work")},
            }
        )
    )
    ids_file = tmp_path / "preview-ids.txt"
    args = ["preview", "--config", str(config), "--format", "native", "--ids-out", str(ids_file)]
    preview = CliRunner().invoke(app, [*args, str(source)])
    assert preview.exit_code == 0, preview.output
    assert "not predicted here: redaction's refusals" in preview.output
    previewed = sorted(ids_file.read_text().split())
    refuse = set(previewed[::4])  # a quarter of the selection, representatives all
    monkeypatch.setattr(redact_body, "redact_candidates", _refusing(refuse))
    checked_ids = tmp_path / "checked-ids.txt"
    checked = CliRunner().invoke(
        app,
        [*args[:-1], str(checked_ids), "--check-redaction", str(source)],
    )
    assert checked.exit_code == 0, checked.output
    assert "not predicted here" not in checked.output

    store = tmp_path / "store"
    result = CliRunner().invoke(
        app,
        ["run", "--local", "--config", str(config), "--source", str(source), "--format",
         "native", "--store", str(store), "--set", "refusals"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    version = (store / "refusals" / "refs" / "latest").read_text().strip()
    golden = open_set(str(store), f"refusals@{version}")
    published = set(golden.read_table()["case_id"].to_pylist())
    assert not published & refuse
    clusters = pq.read_table(store / "refusals" / "versions" / version / "clusters.parquet")
    members, cluster_ids = clusters["case_id"].to_pylist(), clusters["cluster_id"].to_pylist()
    cluster_of = dict(zip(members, cluster_ids, strict=True))
    published_clusters = {cluster_of[c] for c in published}
    lost = {cluster_of[c] for c in refuse} - published_clusters
    replaced = {c for c in refuse if cluster_of[c] in published_clusters}
    assert lost and replaced  # the fixture has both kinds

    counts = golden.manifest["stats"]["redaction_refusals"]
    assert counts["selected"] == len(previewed)
    assert counts["refused"] == counts["refused_selected"] == len(refuse)
    assert counts["replaced"] == len(replaced)
    assert counts["clusters_lost"] == len(lost)
    assert counts["published"] == len(published)
    assert counts["selected"] - counts["lost"] + counts["admitted"] == counts["published"]

    assert f"published: {len(published):,} cases" in result.output
    # preview with --check-redaction predicted exactly this
    assert set(checked_ids.read_text().split()) == published
    assert (
        f"redaction check: {len(refuse):,} would be refused; {len(replaced):,} replaced, "
        f"{len(lost):,} cluster(s) lost; {len(published):,} of {len(previewed):,} would be "
        "published"
    ) in checked.output
    assert (
        f"{len(published):,} of {len(previewed):,} selected cases published; redaction refused "
        f"{len(refuse):,}: {len(replaced):,} replaced by the next member of their cluster, "
        f"{len(lost):,} cluster(s) lost"
    ) in result.output
    report = (store / "refusals" / "versions" / version / "report.html").read_text()
    assert "clusters lost (no member could be published)" in report
    assert "replaced by the next cluster member" not in report.replace(
        "redaction refused, replaced by the next cluster member", ""
    )
    assert json.dumps(counts)  # plain numbers, no case content
