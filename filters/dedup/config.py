"""Deduplication (section `dedup:`): normalisation, blocking, clustering thresholds."""

from __future__ import annotations

from golden_distill.datasets.config_model import StrictModel


class DedupConfig(StrictModel):
    """Placeholder: fields are declared (with descriptions) by the module that uses them."""
