"""Selection funnels (section `funnels:`) and quotas. Owned by the funnels work."""

from __future__ import annotations

from golden_distill.datasets.config_model import StrictModel


class FunnelsConfig(StrictModel):
    """Placeholder: fields are declared (with descriptions) by the module that uses them."""
