"""high_value_mutating: runs that changed state in a way worth replaying.

Member when the run made at least ``min_write_calls`` writes (is_mutating steps with a counted
status) AND at least one of: the writes touched >= ``min_systems`` distinct systems; a write's
amount (largest number at ``amount_paths``) >= ``amount_threshold``; the run is complex (>=
``min_steps`` steps, more steps than the batch's ``steps_percentile``, >= ``min_distinct_tools``
distinct tools, or >= ``min_retries`` retries); with ``good_reward_above`` set, a run with a
recorded reward must also have reward above it. ``min_systems: 1`` lets single-system writes
qualify (each tau-bench environment is one system).

Contribution to value_score: ``weight x (criteria met)`` where the criteria are systems, amount
and complexity, so 1 to 3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import polars as pl
from pydantic import Field, field_validator

from golden_distill.datasets.config_model import StrictModel
from golden_distill.datasets.schema import STEP_STATUSES
from golden_distill.datasets.sources.tool_catalogue import PREFIX_SYSTEMS, system_from_prefix
from golden_distill.filters.funnel import (
    BatchFigure,
    Funnel,
    format_amount,
    format_number,
    known_values,
    plural,
)
from golden_distill.filters.inputs import FunnelInputs
from golden_distill.filters.json_paths import max_number_expr, parse_path

if TYPE_CHECKING:
    from golden_distill.filters.config import FunnelsConfig

DEFAULT_AMOUNT_PATHS = [
    "amount",
    "total",
    "totalAmount",
    "payment.amount",
    "items[*].amount",
    "payment_methods[*].amount",
]


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
        return known_values(values, STEP_STATUSES, "step status(es)")

    @field_validator("amount_in")
    @classmethod
    def _known_fields(cls, names: list[str]) -> list[str]:
        bad = sorted(set(names) - {"arguments", "response"})
        if bad:
            raise ValueError(f"unknown step field(s) {bad}; use arguments and/or response")
        return names


def _steps_threshold(n_steps: pl.Series, config: FunnelsConfig) -> float | None:
    """The ``steps_percentile`` of the batch's run lengths (None when the criterion is off)."""
    cfg = config.high_value_mutating
    if not cfg.enabled or cfg.steps_percentile is None:
        return None
    value = n_steps.fill_null(0).quantile(cfg.steps_percentile / 100, "linear")
    return float(value) if value is not None else float("inf")


def system_for_name(name: str, cfg: HighValueMutatingConfig) -> str | None:
    """The system a tool name maps to: tool_systems, else the first matching prefix."""
    if name in cfg.tool_systems:
        return cfg.tool_systems[name]
    return system_from_prefix(name, cfg.system_prefixes)


class HighValueMutatingFunnel(Funnel):
    name: ClassVar[str] = "high_value_mutating"
    config_model = HighValueMutatingConfig
    summary = "Write-heavy, high-value runs."
    figures = (
        BatchFigure("steps_threshold", "n_steps", _steps_threshold, permissive=float("-inf")),
    )

    def step_fields(self) -> tuple[str, ...]:
        cfg = self.config.high_value_mutating
        return tuple(cfg.amount_in) if self._amounts_used() else ()

    def _amounts_used(self) -> bool:
        cfg = self.config.high_value_mutating
        return cfg.enabled and cfg.amount_threshold is not None and bool(cfg.amount_paths)

    def prepare_steps(self, steps: pl.DataFrame) -> pl.DataFrame:
        """``system``: the recorded one, else tool_systems, else the tool-name prefix (tool names
        are few, so the maps run once per distinct name); ``amount``: the largest number at
        ``amount_paths`` in a write step's JSON (null for reads)."""
        cfg = self.config.high_value_mutating
        names = steps.get_column("name").unique().drop_nulls().to_list()
        mapping = {n: system_for_name(n, cfg) for n in names}
        mapped = pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String)
        steps = steps.with_columns(system=pl.coalesce(pl.col("system"), mapped))
        if not self._amounts_used():
            return steps.with_columns(amount=pl.lit(None, dtype=pl.Float64))
        writes = pl.col("is_mutating").fill_null(False)
        steps = steps.with_columns(
            [pl.when(writes).then(pl.col(f)).alias(f"_{f}") for f in cfg.amount_in]
        )
        amounts = [max_number_expr(f"_{f}", cfg.amount_paths) for f in cfg.amount_in]
        return steps.with_columns(amount=pl.max_horizontal(amounts)).drop(
            [f"_{f}" for f in cfg.amount_in]
        )

    def score(self, inputs: FunnelInputs) -> pl.LazyFrame:
        cfg = self.config.high_value_mutating
        steps = inputs.steps
        is_write = pl.col("is_mutating").fill_null(False) & pl.col("status").is_in(
            cfg.write_statuses
        )
        writes = (
            steps.filter(is_write)
            .group_by("case_id")
            .agg(
                n_writes=pl.len().cast(pl.Int32),
                write_systems=pl.col("system").drop_nulls().unique().sort(),
                max_amount=pl.col("amount").max(),
            )
        )
        scores = inputs.cases.select("case_id", "n_steps", "out_reward").join(
            writes, on="case_id", how="left", maintain_order="left"
        )
        figures = []  # per-call figures cost a pass over every step: only when configured
        if cfg.min_distinct_tools is not None:
            figures.append(pl.col("name").n_unique().cast(pl.Int32).alias("distinct_tools"))
        if cfg.min_retries is not None:
            retried = (
                pl.col("status").shift(1).over(["case_id", "name"], order_by="pos") != "ok"
            ).fill_null(False)
            figures.append(retried.sum().cast(pl.Int32).alias("retries"))
        if figures:
            per_case_calls = (
                steps.filter(pl.col("kind") != "model").group_by("case_id").agg(figures)
            )
            scores = scores.join(per_case_calls, on="case_id", how="left", maintain_order="left")
        for name in ("distinct_tools", "retries"):
            if name not in scores.collect_schema().names():
                scores = scores.with_columns(pl.lit(0, dtype=pl.Int32).alias(name))
        return scores.with_columns(
            pl.col("n_writes", "distinct_tools", "retries").fill_null(0),
            pl.col("write_systems").fill_null(pl.lit([], dtype=pl.List(pl.String))),
            steps_threshold=pl.lit(inputs.batch.get("steps_threshold"), dtype=pl.Float64),
        )

    def decide(self, scores: pl.LazyFrame) -> pl.LazyFrame:
        cfg = self.config.high_value_mutating
        false = pl.lit(False)
        n_systems = pl.col("write_systems").list.len()
        systems_ok = n_systems >= cfg.min_systems if cfg.min_systems is not None else false
        amount_ok = (
            (pl.col("max_amount") >= cfg.amount_threshold).fill_null(False)
            if cfg.amount_threshold is not None
            else false
        )
        steps_ok = pl.col("n_steps") >= cfg.min_steps if cfg.min_steps is not None else false
        pct_ok = (
            (pl.col("n_steps") > pl.col("steps_threshold")).fill_null(False)
            if cfg.steps_percentile is not None
            else false
        )
        tools_ok = (
            pl.col("distinct_tools") >= cfg.min_distinct_tools
            if cfg.min_distinct_tools is not None
            else false
        )
        retries_ok = pl.col("retries") >= cfg.min_retries if cfg.min_retries is not None else false
        complex_ok = steps_ok | pct_ok | tools_ok | retries_ok
        member = (pl.col("n_writes") >= cfg.min_write_calls) & (systems_ok | amount_ok | complex_ok)
        reward_ok = None
        if cfg.good_reward_above is not None:
            reward = pl.col("out_reward")
            reward_ok = reward.is_null() | (reward > cfg.good_reward_above)
            member = member & reward_ok

        base = plural(pl.col("n_writes"), "write call")
        across = pl.when(n_systems > 0).then(
            pl.concat_str([pl.lit(" across "), pl.col("write_systems").list.join("+")])
        )
        pieces = [
            pl.concat_str([base, across], ignore_nulls=True),
            pl.when(systems_ok).then(
                pl.format("{} systems >= {}", n_systems, pl.lit(cfg.min_systems))
            ),
            pl.when(amount_ok).then(
                pl.format(
                    "amount {} >= {}",
                    format_amount(pl.col("max_amount")),
                    pl.lit(format_number(cfg.amount_threshold or 0)),
                )
            ),
            pl.when(steps_ok).then(pl.format("{} steps >= {}", "n_steps", pl.lit(cfg.min_steps))),
            pl.when(pct_ok).then(
                pl.format(
                    "{} steps > p{} of batch ({})",
                    "n_steps",
                    pl.lit(format_number(cfg.steps_percentile or 0)),
                    pl.col("steps_threshold").round(1),
                )
            ),
            pl.when(tools_ok).then(
                pl.format(
                    "{} distinct tools >= {}", "distinct_tools", pl.lit(cfg.min_distinct_tools)
                )
            ),
            pl.when(retries_ok).then(
                pl.format("{} retries >= {}", "retries", pl.lit(cfg.min_retries))
            ),
        ]
        if reward_ok is not None:
            pieces.append(
                pl.when(pl.col("out_reward").is_not_null()).then(
                    pl.format(
                        "reward {} > {}",
                        pl.col("out_reward").round(2),
                        pl.lit(format_number(cfg.good_reward_above or 0)),
                    )
                )
            )
        met = systems_ok.cast(pl.Int32) + amount_ok.cast(pl.Int32) + complex_ok.cast(pl.Int32)
        return scores.select(
            "case_id",
            member=member,
            reason=pl.when(member).then(pl.concat_str(pieces, separator="; ", ignore_nulls=True)),
            contribution=pl.when(member).then(met * cfg.weight).otherwise(0.0).cast(pl.Float64),
        )
