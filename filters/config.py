"""Selection funnels and quotas (section `funnels:`).

One sub-section per funnel plus `quotas:`. Each funnel declares its own section model in its
module (``Funnel.config_model``); ``FunnelsConfig`` is built here from the registry, so adding a
funnel adds its section without touching this file. Every field documents itself (`golden
config schema` prints these descriptions); unknown keys are errors with a did-you-mean hint.
Defaults are the agreed "funnel default semantics" the synthetic generator plants by, so the
shipped config and the truth file always agree.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model, field_validator, model_validator

from golden_distill.datasets.config_model import StrictModel
from golden_distill.filters.funnel import Funnel
from golden_distill.filters.registry import FUNNEL_CLASSES


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


FUNNEL_SECTIONS = tuple(cls.name for cls in FUNNEL_CLASSES)


class _FunnelsBase(StrictModel):
    """Checks across sections (the per-funnel caps name known funnels)."""

    @model_validator(mode="after")
    def _quota_names_known(self) -> Any:
        quotas: QuotasConfig = self.quotas  # type: ignore[attr-defined]
        unknown = sorted(set(quotas.per_funnel_max) - set(FUNNEL_SECTIONS))
        if unknown:
            raise ValueError(
                f"quotas.per_funnel_max names unknown funnel(s) {unknown}; "
                f"known: {', '.join(FUNNEL_SECTIONS)}"
            )
        return self


def funnels_config_model(classes: tuple[type[Funnel], ...]) -> type[StrictModel]:
    """The `funnels:` model for these funnel classes: one section per funnel (its own
    ``config_model``), then `quotas:`."""
    fields: dict[str, Any] = {
        cls.name: (
            cls.config_model,
            Field(default_factory=cls.config_model, description=cls.summary),
        )
        for cls in classes
    }
    fields["quotas"] = (
        QuotasConfig,
        Field(default_factory=QuotasConfig, description="Per-funnel, per-tenant and total caps."),
    )
    return create_model(  # type: ignore[call-overload, no-any-return]
        "FunnelsConfig",
        __base__=_FunnelsBase,
        __doc__="Selection funnels and quotas.",
        __module__=__name__,
        **fields,
    )


#: The `funnels:` section: one sub-section per registered funnel, then `quotas:`.
FunnelsConfig = funnels_config_model(FUNNEL_CLASSES)
