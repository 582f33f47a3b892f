"""`golden preview` selects exactly what `golden run` publishes (redaction aside): the same
funnels, dedup clustering and quotas over representatives, on the generated demo-style corpus."""

from __future__ import annotations

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
