"""Choosing again after the select step: what redaction's refusals and review decisions change.

The select step (``filters/selection.py``) chooses before redaction runs and before the review
log is read. These pure functions decide what changes after: which cases a review's
rejections leave out, how a redaction round's outcome is taken (``after_round``), the
representatives of the clusters a refused or rejected case leaves (``representatives_again``),
and, for a grown set, each new candidate's status and the carried cases that leave. The flow
(``flows/tasks/selection_result.py``) holds the frames and wires these; no I/O here.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.representatives import choose_representatives
from golden_distill.filters.selection import QUOTA_COLUMNS, REJECTED, SELECTED, requota

#: The cluster table columns a choice reads (representatives, membership).
CHOICE_CLUSTER_COLUMNS = [
    "cluster_id",
    "case_id",
    "exact_hash",
    "merged_by",
    "rank",
    "cluster_size",
]


class Next(Enum):
    """What a redaction round's outcome asks of the selection."""

    AGAIN = "again"  # only the refused cases' clusters choose again, then the quotas
    FULL = "full"  # a whole choice (a grown set, or tenants learned for the quotas)
    SHARES = "shares"  # nothing changes but the tenants' published names in the shares


def after_round(refused: set[str], learned: bool, grown: bool, can_requota: bool) -> Next:
    """How to take a redaction round: refusals of a set built from sources choose again only
    where they fall (``AGAIN``: a full choice holds every candidate's rows beside the
    redaction workers); a grown set's quotas run again over the grown set when a case was
    refused or a new case's published tenant became known (``FULL``)."""
    if refused and not grown and can_requota:
        return Next.AGAIN
    if refused or learned:
        return Next.FULL
    return Next.SHARES


def review_left_out(
    rejected_ids: Iterable[str],
    rejected_hashes: Iterable[str],
    hashes: Iterable[pl.DataFrame],
) -> set[str]:
    """The case ids a review's rejections leave out: the rejected ids, and every case with
    the content hash (``exact_hash``) of a rejected one in ``hashes`` (frames of case_id,
    exact_hash: the new clusters, a grown set's carried clusters), so the same run recorded
    again under another id stays out too."""
    ids = set(rejected_ids)
    wanted = sorted(set(rejected_hashes))
    if not wanted:
        return ids
    for frame in hashes:
        if "exact_hash" not in frame.columns:
            continue
        same = frame.filter(pl.col("exact_hash").is_in(wanted))
        ids |= set(same.get_column("case_id").to_list())
    return ids


def representatives_again(
    quota_rows: pl.LazyFrame,
    clusters: pl.LazyFrame | None,
    decisions: pl.LazyFrame,
    left_out: set[str],
    funnels: FunnelsConfig,
    dedup: DedupConfig,
) -> pl.DataFrame:
    """``choose(...).representatives`` once ``left_out`` (refused, rejected) are left out, from
    the select step's ``quota_rows``: only the clusters holding a case left out choose a
    representative again (among their members: a few rows), then the quotas run again over
    every cluster's representative. No candidate's status is decided, so the flow holds a few
    small columns while the redaction workers wait (tests/flows/test_choice.py)."""
    out = pl.Series("case_id", sorted(left_out), dtype=pl.String).implode()
    if clusters is None:  # no dedup: every candidate is its own representative
        return requota(quota_rows.filter(~pl.col("case_id").is_in(out)).collect(), funnels)
    affected = clusters.filter(pl.col("case_id").is_in(out)).select("cluster_id").unique()
    members = clusters.join(affected, on="cluster_id", how="semi")
    fresh = choose_representatives(
        members.select(CHOICE_CLUSTER_COLUMNS).collect(),
        left_out,
        dedup.keep_per_cluster,
    ).select("case_id", "cluster_id", "cluster_size")
    # a representative's quota row is its case id's first row, when that is a candidate's
    firsts = (
        decisions.with_row_index("_row")
        .join(fresh.lazy().select("case_id"), on="case_id", how="semi")
        .sort("_row")
        .unique("case_id", keep="first", maintain_order=True)
        .filter(pl.col("candidate"))
        .select(QUOTA_COLUMNS)
        .join(fresh.lazy(), on="case_id", how="left")
    )
    kept = quota_rows.join(affected, on="cluster_id", how="anti")
    rows = pl.concat([kept, firsts], how="vertical_relaxed").collect()
    return requota(rows, funnels)


def grown_statuses(
    new: pl.Series,
    representatives: pl.Series,
    kept: pl.Series,
    cut: pl.DataFrame | None,
    rejected: Iterable[str],
) -> pl.DataFrame:
    """case_id, status of a grown set's new candidates (``new``): selected (``kept`` by the
    quotas), ``quota:<cap>`` (``cut``: case_id, reason), ``review:rejected``, or a member of
    a cluster another case stands for (``dedup:near``: not a representative). Redaction's
    refusals are said by the decisions table (``filters/decision_table.py``)."""
    frame = pl.DataFrame({"case_id": new.cast(pl.String)})
    reasons: dict[str, Any] = {}
    if cut is not None and cut.height:
        reasons = dict(zip(cut["case_id"].to_list(), cut["reason"].to_list(), strict=True))
    quota = pl.col("case_id").replace_strict(reasons, default=None, return_dtype=pl.String)
    status = (
        pl.when(pl.col("case_id").is_in(sorted(set(rejected))))
        .then(pl.lit(REJECTED))
        .when(pl.col("case_id").is_in(kept.implode()))
        .then(pl.lit(SELECTED))
        .when(quota.is_not_null())
        .then(quota)
        .when(pl.col("case_id").is_in(representatives.implode()))
        .then(pl.lit(SELECTED))
        .otherwise(pl.lit("dedup:near"))
    )
    return frame.with_columns(status=status)


def carried_left(
    parent_ids: pl.Series,
    still_carried: pl.Series,
    quota_left: pl.DataFrame | None,
    aged_out: pl.DataFrame | None,
) -> pl.DataFrame:
    """case_id, reason of the parent's cases a grown set lets go: ``aged_out``,
    ``quota:<cap>``, else ``review:rejected`` (a reviewer rejected it, or a run with its
    content)."""
    known: dict[str, str] = {}
    for frame in (aged_out, quota_left):
        if frame is not None and frame.height:
            known.update(zip(frame["case_id"].to_list(), frame["reason"].to_list(), strict=True))
    gone = pl.DataFrame({"case_id": parent_ids.cast(pl.String)}).filter(
        ~pl.col("case_id").is_in(still_carried.implode())
    )
    return gone.with_columns(
        reason=pl.col("case_id").replace_strict(known, default=REJECTED, return_dtype=pl.String)
    )
