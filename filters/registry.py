"""Every funnel, in the order the runner applies them (gates last). A new funnel is one file,
one test file and one line here: its config section, the step fields it reads and its
batch-wide figures come with its class (``filters/config.py`` builds ``funnels:`` from these)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from golden_distill.filters.funnel import Funnel
from golden_distill.filters.high_value_mutating import HighValueMutatingFunnel
from golden_distill.filters.human_handoff import HumanHandoffFunnel
from golden_distill.filters.recovery import RecoveryFunnel
from golden_distill.filters.redacted import RedactedGate

if TYPE_CHECKING:
    from golden_distill.filters.config import FunnelsConfig

FUNNEL_CLASSES: tuple[type[Funnel], ...] = (
    HighValueMutatingFunnel,
    RecoveryFunnel,
    HumanHandoffFunnel,
    RedactedGate,
)


def all_funnels(config: FunnelsConfig) -> list[Funnel]:
    """Every registered funnel for ``config``, enabled or not (each prepares its step columns)."""
    return [cls(config) for cls in FUNNEL_CLASSES]


def build_funnels(config: FunnelsConfig) -> list[Funnel]:
    """Enabled funnels for ``config``: select funnels first, gates last."""
    enabled = [f for f in all_funnels(config) if f.enabled]
    return [f for f in enabled if f.role == "select"] + [f for f in enabled if f.role == "gate"]


def funnel_names() -> list[str]:
    return [cls.name for cls in FUNNEL_CLASSES]
