"""A funnel is one file: its class declares its config section, the step fields it reads and
its batch-wide figures; the `funnels:` model, the columns read and the figures follow."""

from __future__ import annotations

from typing import ClassVar

import polars as pl
import pytest
from pydantic import Field, ValidationError

from golden_distill.datasets.config_model import StrictModel
from golden_distill.filters.case_source import leaf_columns
from golden_distill.filters.config import FunnelsConfig, funnels_config_model
from golden_distill.filters.funnel import Funnel
from golden_distill.filters.inputs import FunnelInputs
from golden_distill.filters.registry import FUNNEL_CLASSES
from golden_distill.filters.runner import declared_figures


class LatencyConfig(StrictModel):
    """Slow calls."""

    enabled: bool = Field(True, description="Run this funnel.")
    min_latency_ms: int = Field(5000, ge=1, description="A call at least this slow qualifies.")


class LatencyFunnel(Funnel):
    name: ClassVar[str] = "slow_calls"
    config_model = LatencyConfig
    summary = "Runs with a slow call."

    def step_fields(self) -> tuple[str, ...]:
        return ("latency_ms",)

    def score(self, inputs: FunnelInputs) -> pl.LazyFrame:  # pragma: no cover - not run here
        return inputs.cases.select("case_id")

    def decide(self, scores: pl.LazyFrame) -> pl.LazyFrame:  # pragma: no cover
        return scores


def test_the_funnels_section_is_built_from_the_funnel_classes():
    assert list(FunnelsConfig.model_fields) == [c.name for c in FUNNEL_CLASSES] + ["quotas"]
    model = funnels_config_model((*FUNNEL_CLASSES, LatencyFunnel))
    config = model.model_validate({"slow_calls": {"min_latency_ms": 900}})
    assert config.slow_calls.min_latency_ms == 900  # type: ignore[attr-defined]
    assert model.model_fields["slow_calls"].description == "Runs with a slow call."
    with pytest.raises(ValidationError, match="min_latency_ms"):
        model.model_validate({"slow_calls": {"min_latency_ms": 0}})


def test_columns_read_and_figures_come_from_the_funnels():
    cfg = FunnelsConfig()
    assert "steps.list.element.arguments" in leaf_columns(cfg)  # the write funnel's amounts
    cfg.high_value_mutating.amount_threshold = None  # no amounts: arguments are not read
    assert not any(c.endswith(".arguments") for c in leaf_columns(cfg))
    assert [f.name for f in declared_figures(FunnelsConfig())] == ["steps_threshold"]
    assert LatencyFunnel(cfg).step_fields() == ("latency_ms",)
