"""Redaction (section `redaction:`): key rules, pseudonymised keys, recognizers, thresholds."""

from __future__ import annotations

from golden_distill.datasets.config_model import StrictModel


class RedactionConfig(StrictModel):
    """Placeholder: fields are declared (with descriptions) by the module that uses them."""
