"""The quotas over the rows they can change: the candidates' (``filters.selection.choose``).

A night's decisions hold one row per record read; most are not candidates (no funnel selected
them) and ``choose`` only copies their status through. So the select step never holds the
night: ``split_decisions`` reads the shards' decisions one at a time and keeps the *active*
rows (every row whose case id has a candidate row, in read order: a case id read twice is
still decided as a whole, its first row wins) and only the *counts* of the others
(``selection_stats`` is a sum of counts, so the other rows' counts, taken once, join each
choice's). ``choose_candidates`` runs ``choose`` over the active rows; the flow's process does
it again, over the few columns it needs, when redaction refuses a case or a reviewer rejects
one (``filters/reselection.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.reselection import (  # noqa: F401 - the flow's names for them
    CHOICE_CLUSTER_COLUMNS,
    representatives_again,
)
from golden_distill.filters.runner import permissive_figures
from golden_distill.filters.selection import Chosen, choose
from golden_distill.filters.selection_stats import add_stats, selection_stats
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.tasks import global_steps
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.work_folder import WorkFolder

#: Decision columns a choice does not read (``choose`` recomputes the pipeline ones; the
#: funnel reasons and step counts are only published): the flow leaves them on disk.
NOT_CHOICE_COLUMNS = ("funnel_reasons", "n_steps", "priority", "cluster_id", "cluster_size")


@dataclass
class SplitDecisions:
    """``active``: every row of a case id with a candidate row, in read order;
    ``other_counts``: ``selection_stats`` of all the other rows (their status stands)."""

    active: pl.DataFrame | None
    other_counts: dict[str, Any]

    def take_active(self) -> pl.DataFrame:
        """The active rows, no longer held here (the select step frees them once decided)."""
        active, self.active = self.active, None
        assert active is not None, "taken already"
        return active


@dataclass(frozen=True)
class CandidateChoice:
    """``chosen``: ``choose`` over the active rows (its decisions are those rows, decided);
    ``counts``: ``selection_stats`` of every row (the active rows' and the others')."""

    chosen: Chosen
    counts: dict[str, Any]


def active_masks(flags: list[pl.DataFrame]) -> list[pl.Series]:
    """Per frame of ``flags`` (case_id, candidate): whether each row's case id has a candidate
    row in any of them (one pass over the night's two smallest columns, the ids as 64-bit
    hashes: 9 bytes a row. A hash shared by two ids can only mark a row of a case id without
    candidate rows active, which ``choose`` then leaves as it is: the same decisions)."""
    if not flags:
        return []
    every = pl.concat([f.select(pl.col("case_id").hash(), "candidate") for f in flags])
    active = every.select(pl.col("candidate").any().over("case_id")).to_series()
    del every
    masks, start = [], 0
    for frame in flags:
        masks.append(active.slice(start, frame.height))
        start += frame.height
    return masks


def split_decisions(
    frames: Iterable[tuple[pl.DataFrame, pl.Series]], funnels: FunnelsConfig
) -> SplitDecisions:
    """Keep the rows ``active_masks`` marks of each frame (taken one at a time, so the caller
    may read them lazily) and count the others."""
    parts: list[pl.DataFrame] = []
    counts: dict[str, Any] | None = None
    for frame, active in frames:
        parts.append(frame.filter(active))
        other = selection_stats(frame.filter(~active), funnels)
        counts = other if counts is None else add_stats(counts, other)
    active_rows = pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()
    return SplitDecisions(active_rows, counts or selection_stats(active_rows.clear(), funnels))


def night_decisions(
    results: list[ShardResult], config: PipelineConfig, work: WorkFolder
) -> SplitDecisions:
    """The night's decisions split (``split_decisions``), reading one shard's at a time. A
    funnel with a batch-wide figure re-scores across every shard, so that run loads them all
    first (``global_steps.batch_wide``)."""
    funnels = config.funnels
    if permissive_figures(funnels):
        whole = global_steps.batch_wide(
            global_steps.load_decisions(results, work), results, config, work
        )
        whole = global_steps.compact_decisions(whole)
        return split_decisions(zip([whole], active_masks([whole]), strict=True), funnels)
    masks = active_masks(
        [work.read_frame(r.decisions_path, ["case_id", "candidate"]) for r in results]
    )
    frames = (global_steps.compact_decisions(work.read_frame(r.decisions_path)) for r in results)
    return split_decisions(zip(frames, masks, strict=True), funnels)


def choose_candidates(
    active: pl.DataFrame,
    other_counts: dict[str, Any],
    clusters: pl.DataFrame | None,
    funnels: FunnelsConfig,
    dedup: DedupConfig,
    excluded: set[str],
    rejected: set[str] | None = None,
) -> CandidateChoice:
    """``choose`` over the ``active`` rows; the same decisions and counts ``choose`` gives over
    every row (tests/flows/test_choice.py)."""
    chosen = choose(active, clusters, funnels, dedup, excluded, rejected or ())
    counts = add_stats(other_counts, selection_stats(chosen.decisions, funnels))
    return CandidateChoice(chosen, counts)
