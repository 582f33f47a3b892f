"""Differences between a replay and its recording, and how severe each is.

``diff_type`` and ``severity`` are the enums of the ``regression_diff_result`` table. Severity
comes from configurable weights (``severity`` in ``configs/gate.yaml``): weight >= 3 is high, 2
medium, 1 or less low; ``final_state_diff`` and ``stub_escape`` are always high, and with
``writes_high`` so is any sequence/parameter/missing/extra diff of a write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from golden_distill.datasets.replay.config import SeveritySection

DIFF_TYPES = (
    "intent_diff",
    "tool_seq_diff",
    "tool_param_diff",
    "tool_output_diff",
    "answer_diff",
    "extra_call",
    "missing_call",
    "stub_escape",
    "final_state_diff",
)
SEVERITIES = ("high", "medium", "low")
ALWAYS_HIGH = frozenset({"final_state_diff", "stub_escape"})
WRITE_SENSITIVE = frozenset({"tool_seq_diff", "tool_param_diff", "missing_call", "extra_call"})
#: Points per severity, for ordering cases in the report.
SCORE = {"high": 3, "medium": 2, "low": 1}


@dataclass(slots=True)
class Diff:
    """One difference in one case. ``recorded``/``replayed`` are what a person compares side
    by side (a call as ``tool(args)``, a state, an answer); ``detail`` says what differs."""

    case_id: str
    trace_id: str | None
    diff_type: str
    detail: str
    severity: str = "low"
    is_write: bool = False
    recorded: str | None = None
    replayed: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the tool (or model/route boundary) the row is about; None for whole-case rows
    tool: str | None = None
    #: where: 1-based positions, e.g. "recorded call 4, replayed call 3"
    position: str | None = None
    #: the stage-2 tolerances applied to what this row compares (``normalise``)
    tolerances: tuple[str, ...] = ()
    #: with ``--repeat N``: in how many of the N replays this row appeared
    seen: int | None = None
    repeats: int | None = None

    def signature(self) -> tuple[Any, ...]:
        """What makes two replays' rows the same difference."""
        return (self.diff_type, self.detail, self.recorded, self.replayed, self.tool,
                self.position)  # fmt: skip

    def __post_init__(self) -> None:
        if self.diff_type not in DIFF_TYPES:
            raise ValueError(f"unknown diff type {self.diff_type!r}")


def severity_of(diff_type: str, is_write: bool, weights: SeveritySection) -> str:
    if diff_type in ALWAYS_HIGH:
        return "high"
    if is_write and weights.writes_high and diff_type in WRITE_SENSITIVE:
        return "high"
    weight = getattr(weights, diff_type)
    return "high" if weight >= 3 else "medium" if weight == 2 else "low"


def case_score(diffs: list[Diff]) -> int:
    return sum(SCORE[d.severity] for d in diffs)
