"""Splits: every published case is in ``dev``, ``regression`` or ``holdout``.

Assigned by cluster, so near duplicates never straddle splits (a holdout case whose twin is in
dev is not held out), and sticky: a case keeps the split it had in the parent version. New
clusters are placed by a seeded hash of the cluster id into [0, 1) against the configured
shares, so the same cluster lands in the same split on every run and machine; a cluster with a
case already placed in the parent goes where that case is.
"""

from __future__ import annotations

import hashlib

import polars as pl

from golden_distill.filters.curation_config import SPLITS, SplitsConfig


def _unit(key: str, seed: int) -> float:
    digest = hashlib.blake2b(key.encode(), digest_size=8, key=seed.to_bytes(8, "big")).digest()
    return int.from_bytes(digest, "big") / 2**64


def split_for(key: str, cfg: SplitsConfig) -> str:
    """The split a new cluster (or a case without one) with id ``key`` goes to."""
    point = _unit(key, cfg.seed)
    edge = 0.0
    for name in SPLITS:
        edge += getattr(cfg, name)
        if point < edge:
            return name
    return SPLITS[-1]


def assign_splits(
    published: pl.DataFrame, cfg: SplitsConfig, previous: dict[str, str] | None = None
) -> pl.Series:
    """One split per row of ``published`` (case_id, cluster_id): the parent's split for a case
    it had, else the split of a case of the same cluster the parent had, else the cluster's
    hash. Returns a ``split`` series aligned with the rows."""
    previous = previous or {}
    keys = published.select(
        "case_id", key=pl.coalesce(pl.col("cluster_id"), pl.col("case_id"))
    ).to_dicts()
    inherited: dict[str, str] = {}
    for row in keys:
        old = previous.get(row["case_id"])
        if old in SPLITS:
            inherited.setdefault(row["key"], old)
    out = []
    for row in keys:
        old = previous.get(row["case_id"])
        if old in SPLITS:
            out.append(old)
        else:
            out.append(inherited.get(row["key"]) or split_for(row["key"], cfg))
    return pl.Series("split", out, dtype=pl.String)


#: The split an unconfirmed case is held out of when `curation.review.require_confirmation`.
GATED = "regression"
#: Where it waits for a person's confirmation.
HELD_IN = "dev"


def gate_unconfirmed(frame: pl.DataFrame, require_confirmation: bool) -> pl.DataFrame:
    """``frame`` (case_id, ``split``: the split each case belongs in, ``_confirmed`` when
    review marks are known) with ``_belongs_in`` (that split) and ``split`` as published: with
    ``require_confirmation`` only a confirmed case stands in regression; an unconfirmed one
    is held in dev. The gate works both ways: the split a case belongs in is what stays
    sticky (``belongs_in``), so once confirmed it moves to regression on the next version."""
    frame = frame.with_columns(_belongs_in=pl.col("split"))
    if not require_confirmation:
        return frame
    confirmed = pl.col("_confirmed") if "_confirmed" in frame.columns else pl.lit(False)
    held = (pl.col("split") == GATED) & ~confirmed.fill_null(False)
    return frame.with_columns(split=pl.when(held).then(pl.lit(HELD_IN)).otherwise("split"))


def belongs_in(frame: pl.DataFrame, previous: dict[str, str]) -> pl.DataFrame:
    """``frame`` (a carried case's published rows) with ``split`` the split each case belongs
    in per ``previous`` (the parent's, ``belongs_in``), its published split otherwise."""
    if not previous:
        return frame
    known = pl.col("case_id").replace_strict(previous, default=None, return_dtype=pl.String)
    return frame.with_columns(split=pl.coalesce(known, pl.col("split")))


def sticky_splits(published: dict[str, str], held: dict[str, str]) -> dict[str, str]:
    """case_id -> the split a parent's case belongs in: its published split, or the split the
    confirmation gate held it out of (the parent's decisions table, ``held_from``)."""
    return {**published, **{k: v for k, v in held.items() if v in SPLITS}}
