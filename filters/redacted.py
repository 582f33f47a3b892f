"""redacted: the compliance gate every published case must pass.

The funnel framework runs gates last: a case is a candidate only when it is in at least one
select funnel AND passes every gate. Here the gate honours the tenant opt-out list; the redaction
step later ANDs in its own result (scrubbed, keys remapped, verification re-scan clean) and
quarantines what fails, so membership here means "not excluded by policy so far".

Contribution to value_score: none (a gate does not make a case more valuable).
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from pydantic import Field

from golden_distill.datasets.config_model import StrictModel
from golden_distill.datasets.tenant_opt_out import OPTED_OUT, TenantOptOut
from golden_distill.filters.funnel import Funnel
from golden_distill.filters.inputs import FunnelInputs


class RedactedConfig(StrictModel):
    """The compliance gate every published case passes. Runs last; the redaction step later
    ANDs in its scrub-and-verify result."""

    opt_out_tenants: list[str] = Field(
        default_factory=list, description="Tenants whose runs are never selected or published."
    )


PASS_REASON = "tenant not opted out"


class RedactedGate(Funnel):
    name: ClassVar[str] = "redacted"
    role = "gate"
    config_model = RedactedConfig
    summary = "The compliance gate (tenant opt-outs)."

    def score(self, inputs: FunnelInputs) -> pl.LazyFrame:
        rule = TenantOptOut.of(self.config.redacted.opt_out_tenants)
        return inputs.cases.select("case_id", opted_out=rule.expr("tenant_id"))

    def decide(self, scores: pl.LazyFrame) -> pl.LazyFrame:
        member = ~pl.col("opted_out")
        return scores.select(
            "case_id",
            member=member,
            reason=pl.when(member).then(pl.lit(PASS_REASON)).otherwise(pl.lit(OPTED_OUT)),
            contribution=pl.lit(0.0),
        )
