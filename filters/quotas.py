"""Quotas and seeded, stratified sampling over the funnel candidates.

Order of priority (deterministic, independent of input/shard order): every candidate gets a
tie-break hash of (seed, case_id) (BLAKE2b, stable across library versions). With
``stratify_by_signature`` the candidates are ranked inside their trajectory signature (tool
sequence) by (value_score desc, hash) and then taken round-robin across signatures: every
signature's best case comes before any signature's second best, so caps cut common paths first
and rare paths survive. Without stratification the order is simply (value_score desc, hash).

Caps then walk that order, each only over what earlier caps kept: per-funnel maximums (a kept case
counts toward every funnel it carries; funnels in registry order), the per-tenant cap, then
``max_cases``. Each cut case records why in ``quota_cut`` (``funnel_max:<name>``, ``tenant_max``,
``max_cases``); kept cases have null.

A cap given as a fraction in (0, 1) is a fraction of the *final* set (what is published, after
dedup: the flow applies quotas to cluster representatives). The final size ``N`` depends on the
caps and the caps on ``N``, so ``N`` is the largest size the caps allow: starting from every
candidate, ``N`` becomes the number the caps (taken as fractions of ``N``) keep, until it stops
shrinking. Kept(N) grows with N, so this reaches the greatest fixed point, and then every
fraction holds of the published set exactly (cap = max(1, floor(fraction x N))).
"""

from __future__ import annotations

import hashlib
import math

import polars as pl

from golden_distill.filters.config import QuotasConfig

FUNNEL_MAX = "funnel_max:{}"
TENANT_MAX = "tenant_max"
MAX_CASES = "max_cases"
#: A case past the final size the fractional caps allow: keeping it would have let some capped
#: tenant or funnel exceed its fraction of the published set.
FRACTIONS = "fraction_of_final_set"


def tiebreak_hash(case_ids: pl.Series, seed: int) -> pl.Series:
    """A stable 64-bit hash of (seed, case_id) per id: same ids + seed, same numbers."""
    key = seed.to_bytes(16, "big", signed=True)
    values = [
        int.from_bytes(hashlib.blake2b(cid.encode(), digest_size=8, key=key).digest(), "big")
        for cid in case_ids.to_list()
    ]
    return pl.Series("tiebreak", values, dtype=pl.UInt64)


def priority_order(
    candidates: pl.DataFrame, cfg: QuotasConfig, tier: str | None = None
) -> pl.DataFrame:
    """``candidates`` sorted into quota priority, with a 0-based ``priority`` column.

    ``tier`` (a column name): rows of a lower tier come before every row of a higher one, each
    tier ordered as above on its own (a grown set ranks its carried cases before new ones)."""
    frame = candidates.with_columns(tiebreak_hash(candidates["case_id"], cfg.seed))
    first, first_desc = ([tier], [False]) if tier is not None else ([], [])
    if cfg.stratify_by_signature:
        over = [*first, "signature"]
        frame = frame.sort(
            [*over, "value_score", "tiebreak", "case_id"],
            descending=[*first_desc, False, True, False, False],
            maintain_order=True,
        ).with_columns(stratum_rank=pl.int_range(pl.len()).over(over))
        keys, desc = [*first, "stratum_rank", "value_score", "tiebreak"], [
            *first_desc, False, True, False
        ]  # fmt: skip
    else:
        keys, desc = [*first, "value_score", "tiebreak"], [*first_desc, True, False]
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


def absolute_cap(cap: float | None, final_size: int) -> int | None:
    """A configured cap as a number of cases: whole numbers as they are, a fraction in (0, 1)
    of ``final_size`` (at least 1)."""
    if cap is None:
        return None
    if cap == 0 or cap >= 1:
        return int(cap)
    return max(1, math.floor(cap * final_size))


def _capped(
    frame: pl.DataFrame, cfg: QuotasConfig, funnel_order: list[str], size: int
) -> pl.DataFrame:
    """Every cap, with fractions taken of a final set of ``size`` cases."""
    frame = frame.with_columns(quota_cut=pl.lit(None, dtype=pl.String))
    for name in funnel_order:
        cap = absolute_cap(cfg.per_funnel_max.get(name), size)
        if cap is not None:
            frame = _cut(frame, pl.col("funnels").list.contains(name), cap, FUNNEL_MAX.format(name))
    per_tenant = absolute_cap(cfg.per_tenant_max, size)
    if per_tenant is not None:
        frame = _cut(frame, pl.lit(True), per_tenant, TENANT_MAX, over="tenant_id")
    reason = MAX_CASES if cfg.max_cases is not None and size >= cfg.max_cases else FRACTIONS
    return _cut(frame, pl.lit(True), size, reason)


def _has_fractions(cfg: QuotasConfig) -> bool:
    caps = [cfg.per_tenant_max, *cfg.per_funnel_max.values()]
    return any(c is not None and 0 < c < 1 for c in caps)


#: Fixed-point rounds before giving up on shrinking further (each round is one vectorised pass;
#: real configs settle in a handful).
MAX_ROUNDS = 200


def apply_quotas(
    candidates: pl.DataFrame, cfg: QuotasConfig, funnel_order: list[str], tier: str | None = None
) -> pl.DataFrame:
    """``candidates`` (case_id, tenant_id, signature, value_score, funnels) in priority order
    with ``priority`` and ``quota_cut`` (null = kept). Quotas disabled: everything kept.
    ``tier``: see ``priority_order`` (caps are filled by lower tiers first)."""
    frame = priority_order(candidates, cfg, tier)
    if not cfg.enabled:
        return frame.with_columns(quota_cut=pl.lit(None, dtype=pl.String))
    size = frame.height if cfg.max_cases is None else min(frame.height, cfg.max_cases)
    result = _capped(frame, cfg, funnel_order, size)
    for _ in range(MAX_ROUNDS if _has_fractions(cfg) else 0):
        kept = int(result["quota_cut"].is_null().sum())
        if kept >= size:
            break
        size = kept
        result = _capped(frame, cfg, funnel_order, size)
    return result


def shares(kept: pl.DataFrame, cfg: QuotasConfig, funnel_order: list[str]) -> dict[str, dict]:
    """Each tenant's and funnel's share of the kept set against its cap (for the report):
    ``{"tenant": {t: {count, share, cap}}, "funnel": {f: {count, share, cap}}}``; ``cap`` is the
    configured value (a fraction or an absolute number) or null."""
    total = kept.height
    out: dict[str, dict] = {"tenant": {}, "funnel": {}}
    if total == 0:
        return out
    tenants = kept.group_by("tenant_id").len().sort(["len", "tenant_id"], descending=[True, False])
    for tenant, count in tenants.iter_rows():
        out["tenant"][str(tenant)] = {
            "count": int(count), "share": round(count / total, 4), "cap": cfg.per_tenant_max
        }  # fmt: skip
    for name in funnel_order:
        count = int(kept.select(pl.col("funnels").list.contains(name).sum()).item() or 0)
        out["funnel"][name] = {
            "count": count, "share": round(count / total, 4), "cap": cfg.per_funnel_max.get(name)
        }  # fmt: skip
    return out
