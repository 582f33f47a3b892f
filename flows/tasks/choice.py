"""The quotas over the rows they can change: the candidates' (``filters.selection.choose``).

A night's decisions hold one row per record read; most are not candidates (no funnel selected
them) and ``choose`` only copies their status through. Running it over every row cost the
select step, and the flow's process when redaction refused a case and the quotas ran again,
about two copies of the whole night's decisions. ``choose_candidates`` runs it over the
*active* rows only: every row whose case id has a candidate row (so a case id read twice is
still decided as a whole: its first row wins). The other rows keep their decision as it is;
their counts join the active rows' for the report (``CandidateChoice.counts``).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.selection import Chosen, choose
from golden_distill.filters.selection_stats import stats_columns
from golden_distill.flows.tasks.frame_ref import FrameRef, FrameWriter


@dataclass(frozen=True)
class CandidateChoice:
    """``chosen``: ``choose`` over the active rows (its decisions are those rows, decided);
    ``counts``: the same choice with every row's status columns, for ``selection_stats``."""

    chosen: Chosen
    counts: Chosen


def _active_ids(decisions: pl.LazyFrame) -> pl.LazyFrame:
    return decisions.filter(pl.col("candidate")).select("case_id").unique()


def active_rows(decisions: pl.LazyFrame) -> pl.DataFrame:
    """The rows of case ids with a candidate row, in their original order."""
    return (
        decisions.with_row_index("_order")
        .join(_active_ids(decisions), on="case_id", how="semi")
        .sort("_order")
        .drop("_order")
        .collect()
    )


def other_rows(decisions: pl.LazyFrame) -> pl.LazyFrame:
    """The rows ``choose`` leaves as they are (case ids without a candidate row)."""
    return decisions.join(_active_ids(decisions), on="case_id", how="anti")


def choose_candidates(
    decisions: pl.LazyFrame,
    clusters: pl.DataFrame | None,
    funnels: FunnelsConfig,
    dedup: DedupConfig,
    excluded: set[str],
    rejected: set[str] | None = None,
) -> CandidateChoice:
    """``choose`` over the active rows of ``decisions``; the same decisions ``choose`` gives
    those rows over every row (tests/flows/test_choice.py)."""
    active = active_rows(decisions)
    chosen = choose(active, clusters, funnels, dedup, excluded, rejected or ())
    columns = stats_columns(funnels)
    every = pl.concat(
        [
            other_rows(decisions).select(columns).collect(),
            chosen.decisions.select(columns),
        ],
        how="vertical_relaxed",
    )
    return CandidateChoice(chosen, Chosen(every, chosen.representatives, chosen.shares))


def write_all_decisions(
    decisions: pl.LazyFrame, active: pl.DataFrame, writer: FrameWriter
) -> FrameRef:
    """Every row to ``writer``: the rows ``choose`` left as they are (with its pipeline columns
    empty), then the active rows as decided; never the whole night in one more frame."""
    rest = other_rows(decisions).collect()
    missing = [
        pl.lit(None, dtype=active.schema[c]).alias(c)
        for c in active.columns
        if c not in rest.columns
    ]
    writer.write(rest.with_columns(missing).select(active.columns))
    del rest
    writer.write(active)
    return writer.close(active.head(0))
