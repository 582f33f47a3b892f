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
