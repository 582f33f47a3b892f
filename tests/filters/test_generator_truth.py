"""On generated recordings, every funnel selects exactly the records the truth file plants in it.

The truth comes from the generator's scenarios (by construction, never by running funnel code);
the cases come from the real native reader. Quotas off, the truth's opt-out tenant opted out.
"""

from __future__ import annotations

import polars as pl
import pytest
from two_phase import select

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import score_cases

SELECTION_FUNNELS = ("high_value_mutating", "recovery", "human_handoff")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from golden_distill.datasets.ingest import ingest
    from golden_distill.synthetic import generate_corpus, load_truth

    root = tmp_path_factory.mktemp("generated")
    generate_corpus(root / "rec", sessions=400, seed=11, shards=2)
    ingest([str(root / "rec")], root / "canonical")
    truth = load_truth(root / "rec")
    cases = pl.read_parquet(root / "canonical" / "cases")
    return truth, cases


def _config(truth) -> FunnelsConfig:
    cfg = FunnelsConfig()
    cfg.quotas.enabled = False
    cfg.redacted.opt_out_tenants = [truth.opt_out_tenant]
    return cfg


def _by_record(scored: pl.DataFrame, cases: pl.DataFrame) -> pl.DataFrame:
    ids = cases.select("case_id", record_id=pl.col("source").struct.field("source_record_id"))
    return scored.join(ids, on="case_id", how="inner")


@pytest.mark.parametrize("funnel", SELECTION_FUNNELS)
def test_precision_and_recall_are_one(corpus, funnel):
    truth, cases = corpus
    scored = _by_record(score_cases(cases, _config(truth)), cases)
    assert scored.height == cases.height
    got = set(scored.filter(pl.col(f"in_{funnel}"))["record_id"])
    expected = truth.funnel_members(funnel) & set(scored["record_id"])
    assert expected, "the corpus plants members of every funnel"
    assert got - expected == set(), f"{funnel}: false positives"
    assert expected - got == set(), f"{funnel}: missed"


def test_gate_and_selection_follow_the_truth(corpus):
    truth, cases = corpus
    cfg = _config(truth)
    result = select(cases, cfg)
    decided = _by_record(result.decisions, cases)
    opted = truth.opt_out_tenant
    for row in decided.iter_rows(named=True):
        expected = truth.expected_funnels(
            row["record_id"], opt_out_tenants=(opted,), include_redacted=True
        )
        assert set(row["funnels"]) == expected, row["record_id"]
        selected = bool(expected - {"redacted"}) and "redacted" in expected
        assert (row["status"] == "selected") == selected
    assert result.stats["dropped"].get("gate:tenant_opted_out", 0) > 0
    assert result.table.height == result.stats["selected"] == result.stats["candidates"]
