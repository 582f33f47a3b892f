"""Splits, trust tiers and the review loop (section `curation:`).

Every field documents itself; unknown keys are errors with a did-you-mean hint.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from golden_distill.datasets.config_model import StrictModel
from golden_distill.datasets.schema import SPLITS, TRUST_TIERS

__all__ = ["SPLITS", "TRUST_TIERS", "CurationConfig", "ReviewConfig", "SplitsConfig"]


class SplitsConfig(StrictModel):
    """Shares of the published set per split. A whole cluster goes to one split (no near
    duplicate of a regression case sits in holdout), and a case keeps the split it had in the
    parent version (sticky); only new cases are assigned, by a seeded hash of their cluster."""

    dev: float = Field(0.2, ge=0, le=1, description="Share of cases for development.")
    regression: float = Field(0.6, ge=0, le=1, description="Share for the regression suite.")
    holdout: float = Field(0.2, ge=0, le=1, description="Share held out (never tuned on).")
    seed: int = Field(20261201, description="Seed of the cluster hash that assigns new cases.")

    @model_validator(mode="after")
    def _sum_to_one(self) -> SplitsConfig:
        total = self.dev + self.regression + self.holdout
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"dev + regression + holdout must be 1 (got {total:g})")
        return self


class ReviewConfig(StrictModel):
    """How human review decisions (`golden review import`) shape the next version."""

    require_confirmation: bool = Field(
        False,
        description="Publish only human-confirmed cases to the regression split (the others "
        "of that split move to dev).",
    )


class CurationConfig(StrictModel):
    splits: SplitsConfig = Field(default_factory=SplitsConfig, description="Split shares.")
    review: ReviewConfig = Field(default_factory=ReviewConfig, description="Review loop.")
