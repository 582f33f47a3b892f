"""The two frames every funnel reads: one row per case, one row per step.

Funnels are polars expressions, not Python loops per case: the runner flattens a batch of
CASE_SCHEMA rows once (steps exploded with their case id and their position in seq order, the
system of every step resolved, amounts read from write steps only) and each funnel aggregates
those frames by case. Built once per batch, shared by all funnels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from golden_distill.filters.config import FunnelsConfig
    from golden_distill.filters.funnel import Funnel

#: Seed of the signature hash (equality only, so any fixed value; never a selection tie-break).
SIGNATURE_SEED = 0x5EED


def tool_sequence_signature(steps: pl.Expr) -> pl.Expr:
    """The quotas' trajectory signature: the tool sequence (model steps left out) of ``steps``
    already in ``seq`` order, hashed; quotas only compare signatures for equality. Tool names
    are not personal data, so a published (redacted) case has the signature it had."""
    calls = pl.element().filter(pl.element().struct.field("kind") != "model")
    return (
        steps.list.eval(calls.struct.field("name"))
        .list.join(">")
        .fill_null("")
        .hash(SIGNATURE_SEED)
    )


@dataclass(slots=True)
class FunnelInputs:
    """One batch of cases, flattened for the funnels.

    ``cases``: case_id, tenant_id, intent_confidence, out_status, out_final_state, out_reward,
    out_handoff, out_low_confidence, n_steps, signature (hash of the tool sequence), and with
    ``details`` tools and systems.
    ``steps``: case_id, pos (0-based, seq order), seq, kind, name, status, is_mutating, system,
    amount (largest amount at the configured paths, write steps only).
    ``batch``: batch-wide figures funnels need (e.g. ``steps_threshold`` for the percentile).
    """

    cases: pl.LazyFrame
    steps: pl.LazyFrame
    batch: dict[str, float] = field(default_factory=dict)


#: Columns of CASE_SCHEMA the funnels read (top level).
INPUT_COLUMNS = ("case_id", "tenant_id", "intent", "steps", "outcome")
#: Step fields every funnel may read; a funnel adds its own with ``Funnel.step_fields``.
SHARED_STEP_FIELDS = ("seq", "kind", "name", "status", "is_mutating", "system")
#: Outcome fields in ``cases`` (as ``out_<field>``).
OUTCOME_FIELDS = ("status", "final_state", "reward", "handoff", "low_confidence")


def build_inputs(
    batch: pl.DataFrame,
    cfg: FunnelsConfig,
    batch_figures: dict[str, float],
    *,
    funnels: Sequence[Funnel],
    details: bool = False,
) -> FunnelInputs:
    """Flatten one batch of CASE_SCHEMA rows (at least INPUT_COLUMNS) into FunnelInputs.

    Eager on purpose: both frames are read by every funnel, so they are built once. The steps
    frame holds the shared step fields plus the fields ``funnels`` declare, which each funnel's
    ``prepare_steps`` turns into its own columns (then the raw fields are dropped). ``details``
    adds per-case ``tools`` and ``systems`` lists (for preview breakdowns)."""
    extra = sorted(
        {f for funnel in funnels for f in funnel.step_fields()} - set(SHARED_STEP_FIELDS)
    )
    ordered = batch.select(INPUT_COLUMNS).with_columns(
        pl.col("steps").list.eval(pl.element().sort_by(pl.element().struct.field("seq")))
    )
    step = pl.col("steps").struct.field
    steps = (
        ordered.select(
            "case_id", "steps", pos=pl.int_ranges(0, pl.col("steps").list.len(), dtype=pl.Int32)
        )
        .explode(["steps", "pos"])
        .filter(pl.col("pos").is_not_null())
        .select("case_id", "pos", *(step(f) for f in (*SHARED_STEP_FIELDS, *extra)))
    )
    for funnel in funnels:
        steps = funnel.prepare_steps(steps)
    steps = steps.drop(extra)

    outcome = pl.col("outcome").struct.field
    cases = ordered.select(
        "case_id",
        "tenant_id",
        intent_confidence=pl.col("intent").struct.field("confidence"),
        out_status=outcome("status"),
        out_final_state=outcome("final_state"),
        out_reward=outcome("reward"),
        out_handoff=outcome("handoff"),
        out_low_confidence=outcome("low_confidence"),
        n_steps=pl.col("steps").list.len().fill_null(0).cast(pl.Int32),
        signature=tool_sequence_signature(pl.col("steps")),
    )
    if details:
        per_case = steps.group_by("case_id").agg(
            tools=pl.col("name").filter(pl.col("kind") != "model").unique().sort(),
            systems=pl.col("system").drop_nulls().unique().sort(),
        )
        cases = cases.join(per_case, on="case_id", how="left", maintain_order="left").with_columns(
            pl.col("tools").fill_null(pl.lit([], dtype=pl.List(pl.String))),
            pl.col("systems").fill_null(pl.lit([], dtype=pl.List(pl.String))),
        )
    return FunnelInputs(cases=cases.lazy(), steps=steps.lazy(), batch=dict(batch_figures))
