"""The two frames every funnel reads: one row per case, one row per step.

Funnels are polars expressions, not Python loops per case: the runner flattens a batch of
CASE_SCHEMA rows once (steps exploded with their case id and their position in seq order, the
system of every step resolved, amounts read from write steps only) and each funnel aggregates
those frames by case. Built once per batch, shared by all funnels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from golden_distill.datasets.sources.tool_catalogue import system_from_prefix
from golden_distill.filters.case_source import INPUT_COLUMNS
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.json_paths import max_number_expr

#: Seed of the signature hash (equality only, so any fixed value; never a selection tie-break).
SIGNATURE_SEED = 0x5EED


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


def system_for_name(name: str, cfg: FunnelsConfig) -> str | None:
    """The system a tool name maps to: tool_systems, else the first matching prefix."""
    hv = cfg.high_value_mutating
    if name in hv.tool_systems:
        return hv.tool_systems[name]
    return system_from_prefix(name, hv.system_prefixes)


def resolved_system(names: pl.Series, cfg: FunnelsConfig) -> pl.Expr:
    """steps.system, else the tool_systems map, else the tool-name prefix map. Tool names are
    few, so the maps run once per distinct name and the steps get a hash lookup."""
    mapping = {n: system_for_name(n, cfg) for n in names.unique().drop_nulls().to_list()}
    mapped = pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String)
    return pl.coalesce(pl.col("system"), mapped)


def build_inputs(
    batch: pl.DataFrame,
    cfg: FunnelsConfig,
    batch_figures: dict[str, float],
    *,
    details: bool = False,
) -> FunnelInputs:
    """Flatten one batch of CASE_SCHEMA rows (at least INPUT_COLUMNS) into FunnelInputs.

    Eager on purpose: both frames are read by every funnel, so they are built once. ``details``
    adds per-case ``tools`` and ``systems`` lists (for preview breakdowns)."""
    hv = cfg.high_value_mutating
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
        .select(
            "case_id",
            "pos",
            *(step(f) for f in ("seq", "kind", "name", "status", "is_mutating", "system")),
            *(
                pl.when(step("is_mutating").fill_null(False)).then(step(f)).alias(f"_{f}")
                for f in hv.amount_in
            ),
        )
    )
    steps = steps.with_columns(system=resolved_system(steps["name"], cfg))
    if hv.enabled and hv.amount_threshold is not None and hv.amount_paths:
        amounts = [max_number_expr(f"_{f}", hv.amount_paths) for f in hv.amount_in]
        steps = steps.with_columns(amount=pl.max_horizontal(amounts))
    else:
        steps = steps.with_columns(amount=pl.lit(None, dtype=pl.Float64))
    steps = steps.drop([f"_{f}" for f in hv.amount_in])

    calls = pl.element().filter(pl.element().struct.field("kind") != "model")
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
        # The tool sequence, hashed: quotas only compare signatures for equality.
        signature=pl.col("steps")
        .list.eval(calls.struct.field("name"))
        .list.join(">")
        .fill_null("")
        .hash(SIGNATURE_SEED),
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
