"""The CI gate: the run's figures against the red lines of ``configs/gate.yaml``.

P0 (fail): write calls and their order identical, final-state convergence, no stub escapes.
P1 (fail unless ``p1.fail`` is off): parameter parity. P2 (warn): step drift, token growth, and
with repeated replays flaky cases. A figure that cannot be known (token growth when no case
reports tokens) is ``None``: its line shows ``n/a`` and is not crossed.
``exit_code``: 0 when the gate passes (warnings included), 1 when it fails; the command uses 2
for usage and data errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from golden_distill.datasets.replay.assertions import CaseCheck
from golden_distill.datasets.replay.config import GateSection
from golden_distill.datasets.replay.diffs import WRITE_SENSITIVE

PASS, WARN, FAIL = "pass", "warn", "fail"


@dataclass(slots=True)
class GateLine:
    level: str  # P0 | P1 | P2
    name: str
    value: float | None  # None: unknown (n/a)
    limit: float
    crossed: bool
    fails: bool  # crossing it fails the gate (else warns)

    @property
    def shown(self) -> str:
        return "n/a" if self.value is None else f"{self.value:.4g}"

    def describe(self) -> str:
        verdict = ("FAIL" if self.fails else "WARN") if self.crossed else "ok"
        if self.value is None:
            verdict = "n/a"
        return f"{self.level} {self.name}: {self.shown} (limit {self.limit:.4g}) {verdict}"


@dataclass(slots=True)
class GateResult:
    lines: list[GateLine] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if any(line.crossed and line.fails for line in self.lines):
            return FAIL
        return WARN if any(line.crossed for line in self.lines) else PASS

    @property
    def exit_code(self) -> int:
        return 1 if self.verdict == FAIL else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "lines": [
                {
                    "level": x.level,
                    "name": x.name,
                    "value": x.value,
                    "limit": x.limit,
                    "crossed": x.crossed,
                    "fails": x.fails,
                }
                for x in self.lines
            ],
        }


def figures(checks: Iterable[CaseCheck]) -> dict[str, float | None]:
    """Run-wide figures the gate compares (``None``: unknown)."""
    write_diffs = escapes = aligned = equal = recorded = replayed = flaky = 0
    repeated = False
    states = states_ok = 0
    tokens_recorded = tokens_replayed = 0
    tokens_known = False
    for check in checks:
        write_diffs += sum(1 for d in check.diffs if d.is_write and d.diff_type in WRITE_SENSITIVE)
        escapes += check.stub_escapes
        if check.repeats is not None and check.repeats > 1:
            repeated = True
            flaky += check.flaky
        aligned += check.aligned
        equal += check.aligned_equal
        recorded += check.recorded_calls
        replayed += check.replayed_calls
        if check.final_state_checked:
            states += 1
            states_ok += check.final_state_ok
        if check.recorded_tokens and check.replayed_tokens is not None:
            tokens_known = True
            tokens_recorded += check.recorded_tokens
            tokens_replayed += check.replayed_tokens
    out: dict[str, float | None] = {
        "write_diffs": write_diffs,
        "stub_escapes": escapes,
        "final_state_convergence": states_ok / states if states else 1.0,
        "parameter_parity": equal / aligned if aligned else 1.0,
        "step_drift": abs(replayed - recorded) / recorded if recorded else 0.0,
        "token_growth": (tokens_replayed / tokens_recorded - 1) if tokens_known else None,
    }
    if repeated:
        out["flaky_cases"] = flaky
    return out


def _over(value: float | None, limit: float) -> bool:
    return value is not None and value > limit


def evaluate(
    checks: Iterable[CaseCheck], gate: GateSection
) -> tuple[GateResult, dict[str, float | None]]:
    f = figures(checks)
    p0, p1, p2 = gate.p0, gate.p1, gate.p2
    lines = [
        GateLine("P0", "write_diffs", f["write_diffs"], 0, p0.writes_identical
                 and f["write_diffs"] > 0, True),
        GateLine("P0", "final_state_convergence", f["final_state_convergence"],
                 p0.min_final_state_convergence,
                 f["final_state_convergence"] < p0.min_final_state_convergence, True),
        GateLine("P0", "stub_escapes", f["stub_escapes"], p0.max_stub_escapes,
                 f["stub_escapes"] > p0.max_stub_escapes, True),
        GateLine("P1", "parameter_parity", f["parameter_parity"], p1.min_parameter_parity,
                 f["parameter_parity"] < p1.min_parameter_parity, p1.fail),
        GateLine("P2", "step_drift", f["step_drift"], p2.max_step_drift,
                 f["step_drift"] > p2.max_step_drift, False),
        GateLine("P2", "token_growth", f["token_growth"], p2.max_token_growth,
                 _over(f["token_growth"], p2.max_token_growth), False),
    ]  # fmt: skip
    if "flaky_cases" in f:
        limit = gate.repeat.max_flaky_cases
        lines.append(GateLine("P2", "flaky_cases", f["flaky_cases"], limit,
                              _over(f["flaky_cases"], limit), False))  # fmt: skip
    return GateResult(lines), f
