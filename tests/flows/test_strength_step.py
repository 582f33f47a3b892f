"""The nightly run measures the new version's strength on its published (redacted) cases: the
figures land in the manifest stats and the report, flagged below ``publish.strength``'s share;
a larger set is measured on a deterministic sample, and the step never fails the run."""

from __future__ import annotations

import pyarrow.parquet as pq
import yaml

from golden_distill.datasets.publish_config import StrengthConfig
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay.strength import measure_strength, sample_case_ids
from golden_distill.flows.report import render_report
from golden_distill.flows.tasks.strength_step import version_strength


def _run(corpus, tmp_path, write_config, name: str, strength: dict) -> tuple[str, str]:
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    source, truth = corpus
    path = write_config(tmp_path / name / "config.yaml", truth.opt_out_tenant)
    config = yaml.safe_load(path.read_text())
    config["publish"] = {"strength": strength}
    path.write_text(yaml.safe_dump(config))
    params = DistillParams(
        config_path=str(path), sources=[str(source)], source_format="native",
        store_url=str(tmp_path / "store"), set_name=name,
    )  # fmt: skip
    return str(tmp_path / "store"), f"{name}@{run_distill(params, local=True)}"


def test_nightly_report_flags_the_published_sets_strength(
    pseudonym_key, corpus, tmp_path, write_config
) -> None:
    store, ref = _run(
        corpus, tmp_path, write_config, "flagged", {"min_kill_share": 1.0, "max_cases": 25}
    )
    golden = open_set(store, ref)
    figures = golden.manifest["stats"]["strength"]
    assert figures["cases"] == 25 and figures["sampled_from"] == len(golden) > 25
    assert figures["flagged"] is True and figures["min_kill_share"] == 1.0
    assert golden.manifest["stats"]["stage_seconds"]["strength"] == figures["seconds"] > 0
    # the figure is the published (redacted) cases' own: the same sample, measured again
    chosen = sample_case_ids([c.case_id for c in golden.cases()], 25)
    again = measure_strength(
        [c.case for c in golden.cases() if c.case_id in chosen], volatile_keys=golden.volatile_keys
    )
    assert figures["total"]["killed"] == again.total.killed > 0
    assert figures["total"]["applicable"] == again.total.applicable
    page = (golden.report_html() or b"").decode()
    assert 'id="strength"' in page and "FLAGGED: kills less than 100%" in page
    assert "sample of 25 of the set" in page

    store, ref = _run(corpus, tmp_path, write_config, "off", {"enabled": False})
    off = open_set(store, ref)
    assert "strength" not in off.manifest["stats"]
    assert 'id="strength"' not in (off.report_html() or b"").decode()


def test_the_step_counts_each_case_once_and_never_raises(corpus, tmp_path) -> None:
    from golden_distill.datasets.ingest import ingest

    source, _ = corpus
    shards = ingest([str(source)], tmp_path / "canonical").shards
    table = pq.read_table(shards[0]).slice(0, 12)
    parts = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    pq.write_table(table, parts[0])
    pq.write_table(table.slice(4, 8), parts[1])  # eight ids again (publish keeps the first)
    ids = set(table.column("case_id").to_pylist())
    settings = StrengthConfig(min_kill_share=0.0)
    figures = version_strength(parts, ids, settings, None)["strength"]
    assert figures["cases"] == 12 and figures["sampled_from"] is None
    assert figures["flagged"] is False and figures["total"]["applicable"] > 0
    capped = version_strength(parts, ids, StrengthConfig(max_cases=5), None)["strength"]
    assert capped["cases"] == 5 and capped["sampled_from"] == 12
    assert version_strength(parts, ids, StrengthConfig(enabled=False), None) is None
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    failed = version_strength([broken], ids, settings, None)
    assert failed is not None and "error" in failed["strength"]
    page = render_report({"set_name": "x", **failed})
    assert "not measured: " + failed["strength"]["error"] in page
