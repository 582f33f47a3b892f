"""recovery: a call failed, the agent recovered, and the run still ended well.

Member when some step (kind in ``step_kinds``) with status in ``failure_statuses`` is followed,
at most ``recover_within_steps`` positions later (seq order, counting every step of the run), by
a status-ok call of the same tool or of one of its configured ``alternatives``; AND the run ended
well: outcome.status not in ``bad_end_statuses``, final_state not ending in a bad suffix, reward
(when recorded) above ``good_reward_above``. The reason names the first recovered failure and how
it was recovered (retry or alternative, and how many steps later).

Contribution to value_score: ``weight x min(recovered failures, 3)``.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from pydantic import Field, field_validator

from golden_distill.datasets.config_model import StrictModel
from golden_distill.datasets.schema import STEP_KINDS, STEP_STATUSES
from golden_distill.filters.funnel import Funnel, known_values, plural
from golden_distill.filters.inputs import FunnelInputs

DEFAULT_ALTERNATIVES = {"erp_get_order": ["erp_search_orders"]}


class RecoveryConfig(StrictModel):
    """A failed call, then a successful retry (or alternative) within M steps, and a good end."""

    enabled: bool = Field(True, description="Run this funnel.")
    weight: float = Field(
        1.0, ge=0, description="Multiplies this funnel's contribution to value_score."
    )
    failure_statuses: list[str] = Field(
        default_factory=lambda: ["error", "timeout"],
        min_length=1,
        description="Step statuses that count as a failed call.",
    )
    step_kinds: list[str] = Field(
        default_factory=lambda: ["tool"],
        min_length=1,
        description="Step kinds considered (failures and recoveries); model steps are not calls.",
    )
    recover_within_steps: int = Field(
        3,
        ge=1,
        le=1000,
        description="The successful call must come at most this many steps "
        "after the failure (positions in seq order among all the run's steps).",
    )
    alternatives: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_ALTERNATIVES.items()},
        description="Failed tool -> other tools whose success also counts as recovering it.",
    )
    bad_end_statuses: list[str] = Field(
        default_factory=lambda: ["failed", "abandoned", "error"],
        description="outcome.status values (case-insensitive) that are not a good end.",
    )
    bad_final_state_suffixes: list[str] = Field(
        default_factory=lambda: ["_FAILED"],
        description="An outcome.final_state ending in one of these is not a good end.",
    )
    good_reward_above: float | None = Field(
        0.0,
        description="When the run has a reward, a good end needs reward > this; a missing "
        "reward is fine. null ignores rewards.",
    )

    @field_validator("failure_statuses")
    @classmethod
    def _statuses(cls, values: list[str]) -> list[str]:
        return known_values(values, STEP_STATUSES, "step status(es)")

    @field_validator("step_kinds")
    @classmethod
    def _kinds(cls, values: list[str]) -> list[str]:
        return known_values(values, STEP_KINDS, "step kind(s)")


class RecoveryFunnel(Funnel):
    name: ClassVar[str] = "recovery"
    config_model = RecoveryConfig
    summary = "Runs that recovered from a failed call."

    def _alternatives(self) -> pl.LazyFrame:
        pairs = [
            (tool, alt)
            for tool, alts in self.config.recovery.alternatives.items()
            for alt in alts
            if alt != tool
        ]
        return pl.LazyFrame(
            {"f_name": [p[0] for p in pairs], "target": [p[1] for p in pairs]},
            schema={"f_name": pl.String, "target": pl.String},
        )

    def score(self, inputs: FunnelInputs) -> pl.LazyFrame:
        cfg = self.config.recovery
        calls = inputs.steps.filter(pl.col("kind").is_in(cfg.step_kinds))
        fails = calls.filter(pl.col("status").is_in(cfg.failure_statuses)).select(
            "case_id", f_pos="pos", f_seq="seq", f_name="name", f_status="status"
        )
        targets = pl.concat(
            [
                fails.with_columns(target=pl.col("f_name")),
                fails.join(self._alternatives(), on="f_name", how="inner"),
            ],
            how="vertical",
        )
        oks = calls.filter(pl.col("status") == "ok").select(
            "case_id", r_pos="pos", r_seq="seq", target="name"
        )
        distance = pl.col("r_pos") - pl.col("f_pos")
        matches = (
            targets.join(oks, on=["case_id", "target"], how="inner")
            .filter((distance > 0) & (distance <= cfg.recover_within_steps))
            .with_columns(distance=distance)
        )
        per_failure = (
            matches.sort(["case_id", "f_pos", "r_pos", "target"])
            .group_by(["case_id", "f_pos"], maintain_order=True)
            .first()
        )
        recovered = (
            per_failure.sort(["case_id", "f_pos"])
            .group_by("case_id", maintain_order=True)
            .agg(
                n_recovered=pl.len().cast(pl.Int32),
                first_name=pl.col("f_name").first(),
                first_status=pl.col("f_status").first(),
                first_seq=pl.col("f_seq").first(),
                first_by=pl.col("target").first(),
                first_distance=pl.col("distance").first(),
            )
        )
        n_failures = fails.group_by("case_id").agg(n_failures=pl.len().cast(pl.Int32))
        return (
            inputs.cases.select("case_id", "out_status", "out_final_state", "out_reward")
            .join(n_failures, on="case_id", how="left", maintain_order="left")
            .join(recovered, on="case_id", how="left", maintain_order="left")
            .with_columns(pl.col("n_failures", "n_recovered").fill_null(0))
        )

    def good_end(self) -> pl.Expr:
        cfg = self.config.recovery
        bad_status = (
            pl.col("out_status").str.to_lowercase().is_in([s.lower() for s in cfg.bad_end_statuses])
        )
        bad_state = pl.lit(False)
        for suffix in cfg.bad_final_state_suffixes:
            bad_state = bad_state | pl.col("out_final_state").str.ends_with(suffix).fill_null(False)
        bad_reward = (
            (pl.col("out_reward") <= cfg.good_reward_above).fill_null(False)
            if cfg.good_reward_above is not None
            else pl.lit(False)
        )
        return ~(bad_status.fill_null(False) | bad_state | bad_reward)

    def decide(self, scores: pl.LazyFrame) -> pl.LazyFrame:
        cfg = self.config.recovery
        member = (pl.col("n_recovered") >= 1) & self.good_end()
        how = (
            pl.when(pl.col("first_by") == pl.col("first_name"))
            .then(pl.lit("retry"))
            .otherwise(pl.concat_str([pl.lit("alternative "), pl.col("first_by")]))
        )
        reward = pl.when(pl.col("out_reward").is_not_null()).then(
            pl.format("reward {}", pl.col("out_reward").round(3))
        )
        reason = pl.concat_str(
            [
                pl.format(
                    "{} {} at step {} recovered by {} {} later",
                    "first_name",
                    "first_status",
                    "first_seq",
                    how,
                    plural(pl.col("first_distance"), "step"),
                ),
                pl.format("{} of {} failed calls recovered", "n_recovered", "n_failures"),
                pl.concat_str(
                    [pl.lit("good end"), pl.concat_str([pl.lit(" ("), reward, pl.lit(")")])],
                    ignore_nulls=True,
                ),
            ],
            separator="; ",
        )
        return scores.select(
            "case_id",
            member=member,
            reason=pl.when(member).then(reason),
            contribution=pl.when(member)
            .then(pl.min_horizontal(pl.col("n_recovered"), pl.lit(3)) * cfg.weight)
            .otherwise(0.0)
            .cast(pl.Float64),
        )
