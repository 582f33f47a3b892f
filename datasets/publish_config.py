"""Publishing (section `publish:`): store URL, set name, file sizes, retention."""

from __future__ import annotations

from golden_distill.datasets.config_model import StrictModel


class PublishConfig(StrictModel):
    """Placeholder: fields are declared (with descriptions) by the module that uses them."""
