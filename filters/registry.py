"""Every funnel, in the order the runner applies them (gates last). A new funnel is one file,
one test file and one line here (plus its config section in filters/config.py)."""

from __future__ import annotations

from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.funnel import Funnel
from golden_distill.filters.high_value_mutating import HighValueMutatingFunnel
from golden_distill.filters.human_handoff import HumanHandoffFunnel
from golden_distill.filters.recovery import RecoveryFunnel
from golden_distill.filters.redacted import RedactedGate

FUNNEL_CLASSES: tuple[type[Funnel], ...] = (
    HighValueMutatingFunnel,
    RecoveryFunnel,
    HumanHandoffFunnel,
    RedactedGate,
)


def build_funnels(config: FunnelsConfig) -> list[Funnel]:
    """Enabled funnels for ``config``: select funnels first, gates last."""
    funnels = [cls(config) for cls in FUNNEL_CLASSES]
    enabled = [f for f in funnels if f.enabled]
    return [f for f in enabled if f.role == "select"] + [f for f in enabled if f.role == "gate"]


def funnel_names() -> list[str]:
    return [cls.name for cls in FUNNEL_CLASSES]
