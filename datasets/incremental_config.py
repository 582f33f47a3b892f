"""Growing golden sets across runs (section `selection:`): retention of carried cases and who
keeps a place when a quota binds on the grown set."""

from __future__ import annotations

from pydantic import Field

from golden_distill.datasets.config_model import StrictModel


class SelectionConfig(StrictModel):
    incremental: bool = Field(
        True,
        description="Build each version from the previous version's cases (those still inside "
        "`max_age_days`) plus this run's new representatives, deduplicated jointly; false (or "
        "`golden run --rebuild`): from this run's sources alone.",
    )
    max_age_days: float | None = Field(
        90,
        gt=0,
        description="A carried cluster whose newest member was recorded more than this many "
        "days before the end of the run's window leaves the set (reason `aged_out`); null: "
        "carried cases never age out.",
    )
    carried_first: bool = Field(
        True,
        description="When a quota (`funnels.quotas`) binds on a grown set, carried cases keep "
        "their places and new cases are cut first, so the set stays stable night to night (a "
        "carried case leaves, reason `quota:<cap>`, only when the carried cases alone exceed a "
        "cap); false: carried and new cases are ranked together as a rebuild ranks them.",
    )
