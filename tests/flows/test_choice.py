"""The quotas over the candidates' rows only (flows/tasks/choice.py), read shard by shard,
decide and count exactly what ``filters.selection.choose`` decides over every row."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from two_phase import two_phase_decisions

from golden_distill.datasets.ingest import ingest
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.dedup import DedupConfig, cluster, signatures
from golden_distill.filters.selection import choose
from golden_distill.filters.selection_stats import add_stats, selection_stats
from golden_distill.flows.tasks.choice import active_masks, choose_candidates, split_decisions
from golden_distill.synthetic import generate_corpus


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> tuple[pl.DataFrame, pl.DataFrame]:
    root: Path = tmp_path_factory.mktemp("choice")
    generate_corpus(root / "raw", sessions=300, seed=5)
    ingest(sorted(str(p) for p in (root / "raw").glob("recordings-*")), root / "c", fmt="native")
    cases = pl.read_parquet(root / "c" / "cases")
    decisions = two_phase_decisions(cases, FunnelsConfig())
    candidates = decisions.filter(pl.col("candidate"))
    scored = cases.join(candidates.select("case_id", "value_score", "funnels"), on="case_id")
    clusters = cluster(signatures(scored, DedupConfig())).table
    # a case id read twice: once as a non-candidate first (its candidate row is then a
    # duplicate), once as the same candidate again
    first, second = candidates.row(0, named=True), candidates.row(1, named=True)
    shadow = pl.DataFrame(
        [{**first, "candidate": False, "status": "no_funnel"}], schema=decisions.schema
    )
    again = pl.DataFrame([second], schema=decisions.schema)
    decisions = pl.concat([shadow, decisions, again])
    return decisions, clusters


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col(pl.List(pl.String)).list.join(",")).sort(pl.all())


@pytest.mark.parametrize("cap", [None, 5])
def test_choosing_over_candidates_equals_choosing_over_every_row(night, cap):
    decisions, clusters = night
    funnels = FunnelsConfig()
    funnels.quotas.per_tenant_max = cap
    reps = choose(decisions, clusters, funnels, DedupConfig()).representatives
    excluded = set(reps["case_id"].head(3).to_list())
    rejected = set(reps["case_id"].slice(3, 2).to_list())
    whole = choose(decisions, clusters, funnels, DedupConfig(), excluded, rejected)
    # read as the select step reads a night: shard by shard (the twice-read case id spans two)
    shards = [decisions.slice(0, 40), decisions.slice(40, 200), decisions.slice(240)]
    split = split_decisions(zip(shards, active_masks(shards), strict=True), funnels)
    assert 0 < split.active.height < decisions.height  # really fewer rows
    choice = choose_candidates(
        split.active, split.other_counts, clusters, funnels, DedupConfig(), excluded, rejected
    )
    assert choice.chosen.representatives.equals(whole.representatives)
    assert choice.chosen.shares == whole.shares
    assert choice.counts == selection_stats(whole.decisions, funnels)
    active_ids = split.active.get_column("case_id").implode()
    same_rows = whole.decisions.filter(pl.col("case_id").is_in(active_ids))
    assert choice.chosen.decisions.columns == whole.decisions.columns
    assert _sorted(choice.chosen.decisions).equals(_sorted(same_rows))
    # the candidate row read after its case id's non-candidate row is a duplicate, as a whole
    shadowed = decisions.row(0, named=True)["case_id"]
    rows = choice.chosen.decisions.filter(pl.col("case_id") == shadowed)
    assert rows["status"].to_list() == ["no_funnel", "dedup:duplicate_id"]


def test_counts_of_disjoint_rows_add_up(night):
    decisions, _ = night
    funnels = FunnelsConfig()
    halves = [decisions.slice(0, 100), decisions.slice(100)]
    added = add_stats(*(selection_stats(h, funnels) for h in halves))
    assert added == selection_stats(decisions, funnels)
    assert list(added["dropped"]) == sorted(added["dropped"])
    assert added["cases"] == decisions.height
