"""Quotas over a grown set: the carried representatives and this window's new ones together.

A version grown night by night (``datasets/incremental.py``) obeys the same caps as a rebuild
(``filters/quotas.py``: per funnel, per tenant, total, fractions of the published set): the
carried and the new representatives are ranked together and the caps walk that order.

Who wins when a cap binds (``selection.carried_first``):

* ``true`` (default): every carried case ranks before every new one (each group in the usual
  quota order), so a binding cap cuts new cases first and the set stays stable night to night;
  a carried case leaves only when the carried cases alone exceed a cap (a tightened config, or
  a fraction of a set that shrank);
* ``false``: carried and new cases are ranked as a rebuild ranks them, so a better new case
  can displace a carried one.

A carried case cut leaves the set with reason ``quota:<cap>`` (``stats.left_the_set``); a new
one is counted like a rebuild's cut (``stats.cut_by_quotas``).

Tenants: a published case's ``tenant_id`` is a keyed pseudonym, a new case's is the original
until redaction has run. ``tenant_keys`` puts a new case whose published tenant is known under
that pseudonym and any other under a key that matches no published one, so the caps never mix
the two spaces; the flow re-applies the quotas once redaction tells it the pseudonyms.
Pure functions over small frames: no I/O, no Prefect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.quotas import apply_quotas, shares
from golden_distill.filters.registry import build_funnels

#: What the quotas read of each representative.
QUOTA_COLUMNS = ("case_id", "tenant_id", "signature", "value_score", "funnels")
#: The reason a carried case cut by a quota leaves with (``quota:tenant_max``...).
LEFT_BY_QUOTA = "quota:{}"
#: How a tenant not redacted yet is shown in shares (its original id never reaches a report).
PENDING = "(not redacted yet)"
#: Prefix of a tenant key whose pseudonym is not known yet (never a published tenant id).
UNREDACTED = "\x00unredacted:"


@dataclass(slots=True)
class GrownQuotas:
    """``kept_new``: the new representatives the caps keep; ``left``: carried cases cut
    (case_id, reason); ``cut_new``: new cases cut per cap; ``shares``: of the kept set."""

    kept_new: pl.Series
    left: pl.DataFrame
    cut_new: dict[str, int] = field(default_factory=dict)
    #: new cases cut (case_id, reason ``quota:<cap>``): the decisions table says which
    cut_new_ids: pl.DataFrame | None = None
    shares: dict[str, Any] = field(default_factory=dict)
    kept: int = 0


def tenant_keys(new: pl.DataFrame, published: dict[str, str]) -> pl.DataFrame:
    """``new`` with ``tenant_id`` as the quotas must compare it with published cases: the
    pseudonym redaction gave the case (``published``: case_id -> published tenant_id), else
    the original under a prefix no published tenant id carries."""
    known = pl.col("case_id").replace_strict(published, default=None, return_dtype=pl.String)
    raw = pl.lit(UNREDACTED) + pl.col("tenant_id").fill_null("")
    return new.with_columns(tenant_id=pl.coalesce(known, raw))


def grown_quotas(
    carried: pl.DataFrame, new: pl.DataFrame, funnels: FunnelsConfig, carried_first: bool = True
) -> GrownQuotas:
    """The caps of ``funnels.quotas`` over ``carried`` + ``new`` (both ``QUOTA_COLUMNS``;
    ``new`` tenants as ``tenant_keys`` gives them); see the module docstring."""
    order = [f.name for f in build_funnels(funnels) if f.role == "select"]
    frame = pl.concat(
        [
            carried.select(QUOTA_COLUMNS).with_columns(_carried=pl.lit(True)),
            new.select(QUOTA_COLUMNS).with_columns(_carried=pl.lit(False)),
        ],
        how="vertical_relaxed",
    ).with_columns(_tier=(~pl.col("_carried")).cast(pl.Int8))
    ranked = apply_quotas(frame, funnels.quotas, order, "_tier" if carried_first else None)
    cut = ranked.filter(pl.col("quota_cut").is_not_null())
    kept = ranked.filter(pl.col("quota_cut").is_null())
    left = cut.filter(pl.col("_carried")).select(
        "case_id", reason=pl.format(LEFT_BY_QUOTA, "quota_cut")
    )
    cut_new = cut.filter(~pl.col("_carried")).group_by("quota_cut").len().sort("quota_cut")
    return GrownQuotas(
        kept_new=kept.filter(~pl.col("_carried")).get_column("case_id"),
        left=left,
        cut_new=dict(zip(cut_new["quota_cut"].to_list(), cut_new["len"].to_list(), strict=True)),
        cut_new_ids=cut.filter(~pl.col("_carried")).select(
            "case_id", reason=pl.format(LEFT_BY_QUOTA, "quota_cut")
        ),
        shares=_published_shares(shares(kept, funnels.quotas, order)),
        kept=kept.height,
    )


def left_counts(aged_out: int, left: pl.DataFrame) -> dict[str, int]:
    """``stats.left_the_set``: carried cases that left, per reason (``aged_out``,
    ``quota:<cap>``)."""
    counts = {"aged_out": aged_out} if aged_out else {}
    for reason, n in left.group_by("reason").len().sort("reason").iter_rows():
        counts[str(reason)] = int(n)
    return counts


def renamed_tenants(tenants: dict[str, dict], names: dict[str, str]) -> dict[str, dict]:
    """Per-tenant shares (``filters.quotas.shares``) keyed by ``names`` (original -> published
    tenant id); a tenant without a published name goes under ``PENDING``, so an original id
    never reaches a report or manifest."""
    out: dict[str, dict] = {}
    for tenant, entry in tenants.items():
        key = names.get(tenant, PENDING)
        if key in out:
            merged = out[key]
            out[key] = {
                "count": merged["count"] + entry["count"],
                "share": round(merged["share"] + entry["share"], 4),
                "cap": entry["cap"],
            }
        else:
            out[key] = dict(entry)
    return out


def _published_shares(found: dict[str, Any]) -> dict[str, Any]:
    """``found`` with tenants not redacted yet under one ``PENDING`` entry (their original ids
    must not reach a report or manifest)."""
    tenants = found.get("tenant") or {}
    pending = [k for k in tenants if k.startswith(UNREDACTED)]
    if not pending:
        return found
    merged = {k: v for k, v in tenants.items() if not k.startswith(UNREDACTED)}
    entries = [tenants[k] for k in pending]
    merged[PENDING] = {
        "count": sum(e["count"] for e in entries),
        "share": round(sum(e["share"] for e in entries), 4),
        "cap": entries[0]["cap"],
    }
    return {**found, "tenant": merged}
