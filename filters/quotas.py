"""Quotas and seeded, stratified sampling over the funnel candidates.

Order of priority (deterministic, independent of input/shard order): every candidate gets a
tie-break hash of (seed, case_id) (BLAKE2b, stable across library versions). With
``stratify_by_signature`` the candidates are ranked inside their trajectory signature (tool
sequence) by (value_score desc, hash) and then taken round-robin across signatures: every
signature's best case comes before any signature's second best, so caps cut common paths first
and rare paths survive. Without stratification the order is simply (value_score desc, hash).

Caps then walk that order, each only over what earlier caps kept: per-funnel maximums (a kept case
counts toward every funnel it carries; funnels in registry order), the per-tenant cap (absolute,
or a fraction of what the funnel caps left), then ``max_cases``. Each cut case records why in
``quota_cut`` (``funnel_max:<name>``, ``tenant_max``, ``max_cases``); kept cases have null.
"""

from __future__ import annotations

import hashlib
import math

import polars as pl

from golden_distill.filters.config import QuotasConfig

FUNNEL_MAX = "funnel_max:{}"
TENANT_MAX = "tenant_max"
MAX_CASES = "max_cases"


def tiebreak_hash(case_ids: pl.Series, seed: int) -> pl.Series:
    """A stable 64-bit hash of (seed, case_id) per id: same ids + seed, same numbers."""
    key = seed.to_bytes(16, "big", signed=True)
    values = [
        int.from_bytes(hashlib.blake2b(cid.encode(), digest_size=8, key=key).digest(), "big")
        for cid in case_ids.to_list()
    ]
    return pl.Series("tiebreak", values, dtype=pl.UInt64)


def priority_order(candidates: pl.DataFrame, cfg: QuotasConfig) -> pl.DataFrame:
    """``candidates`` sorted into quota priority, with a 0-based ``priority`` column."""
    frame = candidates.with_columns(tiebreak_hash(candidates["case_id"], cfg.seed))
    if cfg.stratify_by_signature:
        frame = frame.sort(
            ["signature", "value_score", "tiebreak", "case_id"],
            descending=[False, True, False, False],
            maintain_order=True,
        ).with_columns(stratum_rank=pl.int_range(pl.len()).over("signature"))
        keys, desc = ["stratum_rank", "value_score", "tiebreak"], [False, True, False]
    else:
        keys, desc = ["value_score", "tiebreak"], [True, False]
    frame = frame.sort(
        [*keys, "case_id"], descending=[*desc, False], maintain_order=True
    ).with_row_index("priority")
    return frame.drop([c for c in ("stratum_rank",) if c in frame.columns])


def _cut(
    frame: pl.DataFrame, eligible: pl.Expr, cap: int, reason: str, over: str | None = None
) -> pl.DataFrame:
    """Mark eligible, still-kept rows past the first ``cap`` (in priority order) as cut."""
    eligible = eligible & pl.col("quota_cut").is_null()
    running = eligible.cast(pl.Int64).cum_sum()
    if over is not None:
        running = running.over(over)
    return frame.with_columns(
        quota_cut=pl.when(eligible & (running > cap))
        .then(pl.lit(reason))
        .otherwise(pl.col("quota_cut"))
    )


def tenant_cap(cfg: QuotasConfig, kept_so_far: int) -> int | None:
    """The absolute per-tenant cap: the configured number, or the fraction of ``kept_so_far``."""
    if cfg.per_tenant_max is None:
        return None
    if cfg.per_tenant_max >= 1:
        return int(cfg.per_tenant_max)
    return max(1, math.floor(cfg.per_tenant_max * kept_so_far))


def apply_quotas(
    candidates: pl.DataFrame, cfg: QuotasConfig, funnel_order: list[str]
) -> pl.DataFrame:
    """``candidates`` (case_id, tenant_id, signature, value_score, funnels) in priority order
    with ``priority`` and ``quota_cut`` (null = kept). Quotas disabled: everything kept."""
    frame = priority_order(candidates, cfg).with_columns(quota_cut=pl.lit(None, dtype=pl.String))
    if not cfg.enabled:
        return frame
    for name in funnel_order:
        cap = cfg.per_funnel_max.get(name)
        if cap is not None:
            frame = _cut(frame, pl.col("funnels").list.contains(name), cap, FUNNEL_MAX.format(name))
    kept = int(frame["quota_cut"].is_null().sum())
    per_tenant = tenant_cap(cfg, kept)
    if per_tenant is not None:
        frame = _cut(frame, pl.lit(True), per_tenant, TENANT_MAX, over="tenant_id")
    if cfg.max_cases is not None:
        frame = _cut(frame, pl.lit(True), cfg.max_cases, MAX_CASES)
    return frame
