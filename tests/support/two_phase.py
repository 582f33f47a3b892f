"""Test helpers that run the funnel stage the way the flow does, in two phases.

Phase 1 per shard (each Parquet file of the source is a shard, a frame is one shard): every
funnel scores the shard with *permissive* batch-wide figures. Phase 2 over every shard's small
rows: the batch-wide figures, a re-score of the rows they affect, then ``filters.selection``'s
``choose`` (dedup off here: quotas over the candidates). ``select`` returns the same shape the
old one-call API did, so tests read ``.table``, ``.decisions`` and ``.stats``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from golden_distill.filters.case_source import Source, as_lazy, parquet_files, read_cases
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.runner import (
    figures_from,
    needs_rescore,
    permissive_figures,
    rescore,
    score_cases,
)
from golden_distill.filters.selection import SELECTED, choose
from golden_distill.filters.selection_stats import selection_stats


@dataclass(slots=True)
class SelectionResult:
    table: pl.DataFrame
    decisions: pl.DataFrame
    stats: dict[str, Any] = field(default_factory=dict)


def shards_of(source: Source) -> list[Source]:
    files = parquet_files(source)
    return [source] if files is None else list(files)


def two_phase_decisions(
    source: Source, config: FunnelsConfig, *, batch_rows: int = 10_000, details: bool = False
) -> pl.DataFrame:
    """Every case's decision (quotas not applied yet), as the flow computes them."""
    permissive = permissive_figures(config)
    parts = [
        score_cases(shard, config, batch_rows=batch_rows, figures=permissive, details=details)
        for shard in shards_of(source)
    ]
    decisions = pl.concat(parts, how="diagonal_relaxed")
    if not permissive:
        return decisions
    ids = decisions.filter(needs_rescore(decisions)).get_column("case_id")
    rows = read_cases(source, config).filter(pl.col("case_id").is_in(ids.implode()))
    return rescore(decisions, rows, config, figures_from(decisions, config))


def decide(decisions: pl.DataFrame, config: FunnelsConfig) -> pl.DataFrame:
    """Quotas over the candidates (dedup off), the flow's ``choose``."""
    return choose(decisions, None, config, DedupConfig(enabled=False)).decisions


def annotate(cases: pl.DataFrame | pl.LazyFrame, decisions: pl.DataFrame) -> pl.DataFrame:
    """The selected rows of ``cases`` with funnels, funnel_reasons and value_score, in priority
    order (what the flow publishes for them)."""
    chosen = (
        decisions.filter(pl.col("status") == SELECTED)
        .select("case_id", "funnels", "funnel_reasons", "value_score", "priority")
        .unique("case_id", keep="first", maintain_order=True)
    )
    lf = cases.lazy() if isinstance(cases, pl.DataFrame) else cases
    return (
        lf.join(chosen.lazy(), on="case_id", how="inner")
        .unique("case_id", keep="first", maintain_order=True)
        .sort("priority")
        .drop("priority")
        .collect()
    )


def select(
    source: Source, config: FunnelsConfig, *, batch_rows: int = 10_000, with_table: bool = True
) -> SelectionResult:
    decisions = decide(two_phase_decisions(source, config, batch_rows=batch_rows), config)
    table = annotate(as_lazy(source), decisions) if with_table else pl.DataFrame()
    return SelectionResult(table, decisions, selection_stats(decisions, config))
