"""The funnel contract: a funnel scores every case, then decides membership from the scores.

NeMo Curator's score/decide split keeps measuring apart from thresholds: ``score`` computes
per-case figures (write calls, systems, largest amount, recovered failures...) and ``decide`` turns
them into membership, a human-readable reason and a contribution to ``value_score``. Reasons are
built from counts, tool names, systems and numbers only, never from record text.

Adding a funnel = one file (its ``Funnel`` subclass and its config model) + one test file + one
registry line: the ``funnels:`` config section, the columns read and batch-wide figures all come
from the funnel classes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import polars as pl

from golden_distill.datasets.config_model import StrictModel
from golden_distill.filters.inputs import FunnelInputs

if TYPE_CHECKING:
    from golden_distill.filters.config import FunnelsConfig

#: Columns ``decide`` must return (one row per case it scored).
RESULT_COLUMNS = ("case_id", "member", "reason", "contribution")


@dataclass(frozen=True, slots=True)
class BatchFigure:
    """A figure over the *whole* batch (every shard) that a funnel compares each case with, such
    as a percentile of run lengths. The runner computes it once from the per-case ``column`` of
    ``score_cases`` output (``compute(values, config)``, None when the config does not use it).
    A shard scored before the figure is known uses ``permissive`` instead, a value that lets
    every case pass the criterion, so its candidates are a superset; the global step then
    re-scores those candidates with the real figure (``runner.rescore``)."""

    name: str
    column: str
    compute: Callable[[pl.Series, FunnelsConfig], float | None]
    permissive: float


class Funnel(ABC):
    """One selection funnel. ``role`` is ``select`` (a case in any select funnel is a candidate)
    or ``gate`` (a candidate must pass every gate; gates run last)."""

    name: ClassVar[str]
    role: ClassVar[Literal["select", "gate"]] = "select"
    #: The funnel's config section (``funnels.<name>`` in YAML); the registry builds the
    #: ``funnels:`` model from every funnel's, so a new funnel brings its own settings.
    config_model: ClassVar[type[StrictModel]]
    #: One line describing the section (``golden config schema`` shows it).
    summary: ClassVar[str] = ""
    #: Batch-wide figures this funnel compares cases with (see BatchFigure).
    figures: ClassVar[tuple[BatchFigure, ...]] = ()

    def __init__(self, config: FunnelsConfig) -> None:
        self.config = config

    def step_fields(self) -> tuple[str, ...]:
        """Fields of CASE_SCHEMA ``steps`` this funnel reads beyond the shared ones (seq, kind,
        name, status, is_mutating, system), under its config: the runner reads only these
        Parquet leaves."""
        return ()

    def prepare_steps(self, steps: pl.DataFrame) -> pl.DataFrame:
        """Add this funnel's columns to the shared steps frame (built once per batch, before any
        funnel scores; every registered funnel, enabled or not, so columns always exist)."""
        return steps

    @property
    def section(self) -> StrictModel:
        """This funnel's config section."""
        return getattr(self.config, self.name)

    @property
    def enabled(self) -> bool:
        return bool(getattr(self.section, "enabled", True))

    @abstractmethod
    def score(self, inputs: FunnelInputs) -> pl.LazyFrame:
        """Per-case figures (one row per case of ``inputs.cases``, keyed by case_id)."""

    @abstractmethod
    def decide(self, scores: pl.LazyFrame) -> pl.LazyFrame:
        """RESULT_COLUMNS from ``score``'s output: member (bool), reason (str, null when not a
        member unless the funnel explains refusals), contribution (float, 0 when not a member)."""

    def run(self, inputs: FunnelInputs) -> pl.LazyFrame:
        return self.decide(self.score(inputs)).select(RESULT_COLUMNS)


def plural(count: pl.Expr, singular: str, many: str | None = None) -> pl.Expr:
    """``"1 write call"`` / ``"3 write calls"`` as an expression."""
    many = many or singular + "s"
    return pl.format(
        "{} {}", count, pl.when(count == 1).then(pl.lit(singular)).otherwise(pl.lit(many))
    )


def format_amount(value: pl.Expr) -> pl.Expr:
    """``48200`` -> ``"48,200.00"`` (two decimals, thousands separators), as an expression."""
    cents = (value.abs() * 100).round(0).cast(pl.Int64)
    whole = (cents // 100).cast(pl.String)
    grouped = whole.str.reverse().str.replace_all(r"(\d{3})", "$1,").str.strip_suffix(",")
    frac = (cents % 100).cast(pl.String).str.zfill(2)
    sign = pl.when(value < 0).then(pl.lit("-")).otherwise(pl.lit(""))
    return pl.concat_str([sign, grouped.str.reverse(), pl.lit("."), frac])


def format_number(value: float) -> str:
    """A config number for a reason: ``10000`` -> ``"10,000"``, ``0.5`` -> ``"0.5"``."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def known_values(values: list[str], allowed: tuple[str, ...], what: str) -> list[str]:
    """``values`` when every one is in ``allowed``; a readable error otherwise (validators)."""
    bad = [v for v in values if v not in allowed]
    if bad:
        raise ValueError(f"unknown {what} {bad}; known: {', '.join(allowed)}")
    return values
