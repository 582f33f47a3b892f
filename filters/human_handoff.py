"""human_handoff: the agent handed the run to a person, or said it was unsure.

Member when any trigger fires: a step of kind ``handoff`` (``handoff_step_kind``), a call of a
tool in ``handoff_tools`` (any status), ``outcome.handoff`` true, ``intent.confidence`` below
``min_intent_confidence``, or ``outcome.low_confidence`` true. The reason lists the triggers (the
hand-off step by tool name and seq; never the recorded hand-off reason, which is free text).

Contribution to value_score: ``weight x (triggers fired)``, 1 to 4.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from pydantic import Field

from golden_distill.datasets.config_model import StrictModel
from golden_distill.filters.funnel import Funnel, format_number
from golden_distill.filters.inputs import FunnelInputs

DEFAULT_HANDOFF_TOOLS = ["transfer_to_human_agents", "handoff_to_human", "escalate_to_human"]


class HumanHandoffConfig(StrictModel):
    """The agent handed the run to a human, or was unsure of itself."""

    enabled: bool = Field(True, description="Run this funnel.")
    weight: float = Field(
        1.0, ge=0, description="Multiplies this funnel's contribution to value_score."
    )
    handoff_tools: list[str] = Field(
        default_factory=lambda: list(DEFAULT_HANDOFF_TOOLS),
        description="Tool names that hand the run to a human (any status).",
    )
    handoff_step_kind: bool = Field(True, description="A step of kind `handoff` triggers.")
    outcome_handoff: bool = Field(True, description="outcome.handoff = true triggers.")
    min_intent_confidence: float | None = Field(
        0.5,
        ge=0,
        le=1,
        description="intent.confidence below this triggers. null disables.",
    )
    low_confidence_flag: bool = Field(
        True, description="outcome.low_confidence = true (the agent's own flag) triggers."
    )


class HumanHandoffFunnel(Funnel):
    name: ClassVar[str] = "human_handoff"
    config_model = HumanHandoffConfig
    summary = "Hand-offs and low-confidence runs."

    def score(self, inputs: FunnelInputs) -> pl.LazyFrame:
        cfg = self.config.human_handoff
        is_handoff = pl.col("name").is_in(cfg.handoff_tools)
        if cfg.handoff_step_kind:
            is_handoff = is_handoff | (pl.col("kind") == "handoff")
        handoff_steps = (
            inputs.steps.filter(is_handoff)
            .sort(["case_id", "pos"])
            .group_by("case_id", maintain_order=True)
            .agg(
                handoff_name=pl.col("name").first(),
                handoff_seq=pl.col("seq").first(),
                handoff_steps=pl.len().cast(pl.Int32),
            )
        )
        return (
            inputs.cases.select("case_id", "intent_confidence", "out_handoff", "out_low_confidence")
            .join(handoff_steps, on="case_id", how="left", maintain_order="left")
            .with_columns(pl.col("handoff_steps").fill_null(0))
        )

    def decide(self, scores: pl.LazyFrame) -> pl.LazyFrame:
        cfg = self.config.human_handoff
        false = pl.lit(False)
        step_hit = pl.col("handoff_steps") > 0
        flag_hit = pl.col("out_handoff").fill_null(False) if cfg.outcome_handoff else false
        conf_hit = (
            (pl.col("intent_confidence") < cfg.min_intent_confidence).fill_null(False)
            if cfg.min_intent_confidence is not None
            else false
        )
        low_hit = (
            pl.col("out_low_confidence").fill_null(False) if cfg.low_confidence_flag else false
        )
        member = step_hit | flag_hit | conf_hit | low_hit
        pieces = [
            pl.when(step_hit).then(
                pl.format("hand-off step {} at step {}", "handoff_name", "handoff_seq")
            ),
            pl.when(flag_hit).then(pl.lit("outcome.handoff set")),
            pl.when(conf_hit).then(
                pl.format(
                    "intent confidence {} < {}",
                    pl.col("intent_confidence").round(3),
                    pl.lit(format_number(cfg.min_intent_confidence or 0)),
                )
            ),
            pl.when(low_hit).then(pl.lit("low-confidence flag set")),
        ]
        fired = sum((e.cast(pl.Int32) for e in (step_hit, flag_hit, conf_hit, low_hit)), pl.lit(0))
        return scores.select(
            "case_id",
            member=member,
            reason=pl.when(member).then(pl.concat_str(pieces, separator="; ", ignore_nulls=True)),
            contribution=pl.when(member).then(fired * cfg.weight).otherwise(0.0).cast(pl.Float64),
        )
