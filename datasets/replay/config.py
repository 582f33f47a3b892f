"""The replay config (``configs/gate.yaml``): the CI gate's red lines, diff severities, stage-2
matching normalisers and assertion thresholds. Strict like every config (unknown keys are errors
with a suggestion); each field is documented where it is declared."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from golden_distill.datasets.config_model import StrictModel, load_yaml
from golden_distill.datasets.shipped_configs import shipped_config

#: The gate file shipped with the package (``configs/gate.yaml``, installed as package data).
SHIPPED_GATE = shipped_config("gate.yaml")


class P0(StrictModel):
    """Red lines that always fail the gate."""

    writes_identical: bool = Field(
        True, description="Every recorded write is made, with equal parameters, in recorded order."
    )
    min_final_state_convergence: float = Field(
        1.0, ge=0, le=1, description="Share of cases whose final state equals the expected one."
    )
    max_stub_escapes: int = Field(0, ge=0, description="Calls of tools the recording never made.")


class P1(StrictModel):
    """Red lines that fail the gate unless ``fail`` is off (then they warn)."""

    min_parameter_parity: float = Field(
        0.985, ge=0, le=1, description="Share of aligned calls whose parameters are equal."
    )
    fail: bool = Field(True, description="Crossing a P1 line fails the gate (false: warns).")


class P2(StrictModel):
    """Lines that only warn."""

    max_step_drift: float = Field(
        0.15, ge=0, description="|replayed calls - recorded calls| / recorded calls, whole run."
    )
    max_token_growth: float = Field(
        0.20, ge=0, description="Replayed tokens / recorded tokens - 1, whole run (when known)."
    )


class RepeatLines(StrictModel):
    """With ``--repeat N`` (each case replayed N times): which rows count, and flakiness."""

    min_diff_ratio: float = Field(
        0.0,
        ge=0,
        le=1,
        description="A difference counts for the gate when seen in at least this share of a "
        "case's repeats (0: in any one; 0.5: in half of them).",
    )
    max_flaky_cases: int = Field(
        0, ge=0, description="P2: cases whose repeats disagree (some differ, some not), warns."
    )


class GateSection(StrictModel):
    p0: P0 = Field(default_factory=P0)
    p1: P1 = Field(default_factory=P1)
    p2: P2 = Field(default_factory=P2)
    repeat: RepeatLines = Field(default_factory=RepeatLines)


class SeveritySection(StrictModel):
    """Weights per diff type: weight >= 3 is high, 2 medium, 1 or less low. ``final_state_diff``
    and ``stub_escape`` are always high."""

    intent_diff: int = Field(3, ge=0)
    tool_seq_diff: int = Field(2, ge=0)
    tool_param_diff: int = Field(2, ge=0)
    missing_call: int = Field(2, ge=0, description="A recorded call the replay never made.")
    extra_call: int = Field(2, ge=0, description="A replayed call with no recorded counterpart.")
    tool_output_diff: int = Field(1, ge=0)
    answer_diff: int = Field(1, ge=0)
    writes_high: bool = Field(
        True, description="A sequence, parameter, missing or extra diff of a write is high."
    )


class MatchingSection(StrictModel):
    """Stage 2 of the stub match (after exact name + canonical arguments)."""

    drop_empty_added_keys: bool = Field(
        True, description="Ignore keys the recording lacks whose value is null/false/empty."
    )
    defaults: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per tool (or '*'): key -> declared default; an added key at it is ignored.",
    )
    normalise_dates: bool = Field(True, description="2024-05-20, 05/20/2024, 20 May 2024 equal.")
    normalise_numbers: bool = Field(True, description="1 and 1.0 are equal.")
    numeric_text: bool = Field(
        True,
        description='A number as text equals the number: "1905.77" = "1,905.77" = 1905.77.',
    )
    recorded_defaults: bool = Field(
        True,
        description="Ignore an added key at the one value the recording holds for that key "
        'wherever it appears (an added "currency": "EUR" where the recording only has EUR).',
    )
    text_fields: list[str] = Field(
        default_factory=lambda: ["query", "q", "search", "city", "reason", "note"],
        description="Argument keys whose whitespace and case do not matter.",
    )
    reads_take_next_unused: bool = Field(
        True, description="A read that still matches nothing gets the tool's next unused call."
    )


class AssertionsSection(StrictModel):
    min_step_ratio: float = Field(0.8, gt=0, description="Replayed/recorded calls, per case.")
    max_step_ratio: float = Field(1.25, gt=0)
    query_keys: list[str] = Field(
        default_factory=lambda: ["query", "q", "search", "text", "message", "question", "prompt"],
        description="Query-like argument keys compared by similarity, not equality.",
    )
    query_similarity: float = Field(
        90.0, ge=0, le=100, description="rapidfuzz ratio at or above which query text is equal."
    )
    answer_similarity: float = Field(
        85.0, ge=0, le=100, description="rapidfuzz partial ratio for answer facts and answers."
    )
    compare_answer_text: bool = Field(
        True, description="Without answer facts, compare the answer with the recorded one."
    )


class DeterminismSection(StrictModel):
    tick_ms: int = Field(
        1000, ge=0, description="The frozen clock advances this much per tool call."
    )


class ReplayConfig(StrictModel):
    """Everything ``golden replay`` and the pytest plugin can be told (``configs/gate.yaml``)."""

    gate: GateSection = Field(default_factory=GateSection)
    severity: SeveritySection = Field(default_factory=SeveritySection)
    matching: MatchingSection = Field(default_factory=MatchingSection)
    assertions: AssertionsSection = Field(default_factory=AssertionsSection)
    determinism: DeterminismSection = Field(default_factory=DeterminismSection)


def load_replay_config(path: str | Path | None = None) -> ReplayConfig:
    """The gate file at ``path`` (``ConfigError`` naming each problem), else the defaults."""
    if path is None:
        return ReplayConfig()
    return load_yaml(ReplayConfig, path)
