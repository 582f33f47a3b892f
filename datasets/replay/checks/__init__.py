"""The replay checks, run in this order on every replayed case (``assertions.CaseAsserter``).

Adding a check: one class (``base.Check``: a ``name`` and ``run(ctx) -> list[Diff]``) and one
line in ``CHECKS``. Layer 1 (tool sequence), layer 2 (parameter parity), layer 3 (outcome:
expected writes, final state, intent, answer, tokens) and the model/route boundaries' counts.
"""

from __future__ import annotations

from golden_distill.datasets.replay.checks.answers import Answer, Boundaries, Intent, Tokens
from golden_distill.datasets.replay.checks.base import Check, CheckContext
from golden_distill.datasets.replay.checks.outcome import ExpectedWrites, FinalState
from golden_distill.datasets.replay.checks.parameters import ParameterParity
from golden_distill.datasets.replay.checks.sequence import (
    CallRatio,
    Coverage,
    StubEscapes,
    WriteOrder,
)

CHECKS: tuple[type[Check], ...] = (
    StubEscapes,
    Coverage,
    WriteOrder,
    CallRatio,
    ParameterParity,
    ExpectedWrites,
    FinalState,
    Boundaries,
    Intent,
    Answer,
    Tokens,
)

__all__ = ["CHECKS", "Check", "CheckContext"]
