"""Selection funnels and quotas (section `funnels:`).

One sub-section per funnel plus `quotas:`. Every field documents itself (`golden config schema`
prints these descriptions); unknown keys are errors with a did-you-mean hint. Defaults are the
agreed "funnel default semantics" the synthetic generator plants by, so the shipped config and the
truth file always agree.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from golden_distill.datasets.config_model import StrictModel
from golden_distill.datasets.schema import STEP_KINDS, STEP_STATUSES
from golden_distill.datasets.sources.tool_catalogue import PREFIX_SYSTEMS
from golden_distill.filters.json_paths import parse_path

DEFAULT_AMOUNT_PATHS = [
    "amount",
    "total",
    "totalAmount",
    "payment.amount",
    "items[*].amount",
    "payment_methods[*].amount",
]
DEFAULT_HANDOFF_TOOLS = ["transfer_to_human_agents", "handoff_to_human", "escalate_to_human"]
DEFAULT_ALTERNATIVES = {"erp_get_order": ["erp_search_orders"]}


def _known(values: list[str], allowed: tuple[str, ...], what: str) -> list[str]:
    bad = [v for v in values if v not in allowed]
    if bad:
        raise ValueError(f"unknown {what} {bad}; known: {', '.join(allowed)}")
    return values


class HighValueMutatingConfig(StrictModel):
    """Runs that change state: N write calls AND (many systems OR a big amount OR complexity)."""

    enabled: bool = Field(True, description="Run this funnel.")
    weight: float = Field(
        1.0, ge=0, description="Multiplies this funnel's contribution to value_score."
    )
    min_write_calls: int = Field(
        1, ge=1, description="Minimum write calls (is_mutating steps with a counted status)."
    )
    write_statuses: list[str] = Field(
        default_factory=lambda: ["ok"],
        min_length=1,
        description="Step statuses that count as a write having happened (a failed write "
        "changed nothing).",
    )
    min_systems: int | None = Field(
        2,
        ge=1,
        description="Writes touching at least this many distinct systems qualify. "
        "null disables the criterion.",
    )
    amount_threshold: float | None = Field(
        10_000,
        ge=0,
        description="A write whose amount (at any of amount_paths) is >= this "
        "qualifies. null disables the criterion.",
    )
    amount_paths: list[str] = Field(
        default_factory=lambda: list(DEFAULT_AMOUNT_PATHS),
        description="JSON paths into a write step's JSON: dotted keys, `[*]` for every list "
        "element, `[N]` for one (e.g. `payment.amount`, `items[*].amount`). The largest "
        "numeric value found counts; numeric strings are read as numbers.",
    )
    amount_in: list[str] = Field(
        default_factory=lambda: ["arguments"],
        min_length=1,
        description="Which step JSON fields the amount paths look into: arguments, response.",
    )
    min_steps: int | None = Field(
        20,
        ge=1,
        description="Runs with at least this many steps qualify (complexity). null disables.",
    )
    steps_percentile: float | None = Field(
        None,
        gt=0,
        lt=100,
        description="Runs with more steps than this percentile of the batch "
        "qualify (complexity). null (default) disables.",
    )
    min_distinct_tools: int | None = Field(
        None,
        ge=1,
        description="Runs calling at least this many distinct tools qualify. null disables.",
    )
    min_retries: int | None = Field(
        None,
        ge=1,
        description="Runs with at least this many retries (a call repeating a tool "
        "whose previous call failed) qualify. null disables.",
    )
    good_reward_above: float | None = Field(
        None,
        description="When set, a run with a recorded reward is only a member when reward > "
        "this (a failed run's writes are not behaviour to replay as right); runs without a "
        "reward are unaffected. null (default) ignores rewards.",
    )
    tool_systems: dict[str, str] = Field(
        default_factory=dict,
        description="Tool name -> system, for steps that recorded no "
        "system; checked before system_prefixes.",
    )
    system_prefixes: dict[str, str] = Field(
        default_factory=lambda: dict(PREFIX_SYSTEMS),
        description="Tool-name prefix -> system (case-insensitive), the fallback when neither "
        "the step nor tool_systems names one.",
    )

    @field_validator("amount_paths")
    @classmethod
    def _paths_parse(cls, paths: list[str]) -> list[str]:
        for path in paths:
            parse_path(path)  # raises ValueError with a readable message
        return paths

    @field_validator("write_statuses")
    @classmethod
    def _statuses(cls, values: list[str]) -> list[str]:
        return _known(values, STEP_STATUSES, "step status(es)")

    @field_validator("amount_in")
    @classmethod
    def _known_fields(cls, names: list[str]) -> list[str]:
        bad = sorted(set(names) - {"arguments", "response"})
        if bad:
            raise ValueError(f"unknown step field(s) {bad}; use arguments and/or response")
        return names


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
        return _known(values, STEP_STATUSES, "step status(es)")

    @field_validator("step_kinds")
    @classmethod
    def _kinds(cls, values: list[str]) -> list[str]:
        return _known(values, STEP_KINDS, "step kind(s)")


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


class RedactedConfig(StrictModel):
    """The compliance gate every published case passes. Runs last; the redaction step later
    ANDs in its scrub-and-verify result."""

    opt_out_tenants: list[str] = Field(
        default_factory=list, description="Tenants whose runs are never selected or published."
    )


class QuotasConfig(StrictModel):
    """Caps applied after the funnels, in this order: per funnel, per tenant, total."""

    enabled: bool = Field(True, description="Apply quotas; false keeps every candidate.")
    seed: int = Field(
        20261130,
        description="Seed of the tie-breaking hash: same input + config + seed = "
        "same selection, whatever the shard order.",
    )
    per_funnel_max: dict[str, float] = Field(
        default_factory=dict,
        description="Funnel name -> most published cases that carry it: a whole number >= 1 is "
        "absolute; a value in (0, 1) is a fraction of the published set (after dedup).",
    )
    per_tenant_max: float | None = Field(
        None,
        gt=0,
        description="Most published cases per tenant: a whole number >= 1 is absolute; "
        "a value in (0, 1) is a fraction of the published set (after dedup). null: no cap.",
    )
    max_cases: int | None = Field(None, ge=1, description="Most kept cases overall. null: no cap.")
    stratify_by_signature: bool = Field(
        True,
        description="Take cases round-robin across trajectory signatures (tool sequence) "
        "so caps cut common paths before rare ones.",
    )

    @field_validator("per_tenant_max")
    @classmethod
    def _absolute_or_fraction(cls, value: float | None) -> float | None:
        if value is not None and value >= 1 and value != int(value):
            raise ValueError("must be a whole number >= 1 (absolute) or a fraction in (0, 1)")
        return value

    @field_validator("per_funnel_max")
    @classmethod
    def _positive(cls, caps: dict[str, float]) -> dict[str, float]:
        for name, cap in caps.items():
            if cap < 0:
                raise ValueError(f"{name}: must be >= 0 (got {cap})")
            if cap >= 1 and cap != int(cap):
                raise ValueError(
                    f"{name}: a whole number >= 1 (absolute) or a fraction in (0, 1) (got {cap})"
                )
        return caps


FUNNEL_SECTIONS = ("high_value_mutating", "recovery", "human_handoff", "redacted")


class FunnelsConfig(StrictModel):
    high_value_mutating: HighValueMutatingConfig = Field(
        default_factory=HighValueMutatingConfig, description="Write-heavy, high-value runs."
    )
    recovery: RecoveryConfig = Field(
        default_factory=RecoveryConfig, description="Runs that recovered from a failed call."
    )
    human_handoff: HumanHandoffConfig = Field(
        default_factory=HumanHandoffConfig, description="Hand-offs and low-confidence runs."
    )
    redacted: RedactedConfig = Field(
        default_factory=RedactedConfig, description="The compliance gate (tenant opt-outs)."
    )
    quotas: QuotasConfig = Field(
        default_factory=QuotasConfig, description="Per-funnel, per-tenant and total caps."
    )

    @model_validator(mode="after")
    def _quota_names_known(self) -> FunnelsConfig:
        unknown = sorted(set(self.quotas.per_funnel_max) - set(FUNNEL_SECTIONS))
        if unknown:
            raise ValueError(
                f"quotas.per_funnel_max names unknown funnel(s) {unknown}; "
                f"known: {', '.join(FUNNEL_SECTIONS)}"
            )
        return self
