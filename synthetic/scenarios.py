"""Scenarios: which trajectory a family runs, and which funnels it belongs to *by construction*.

A scenario combines three independent components, one per selection funnel, each either absent
(``none``), a planted positive (``pos_*``) or a planted near-boundary negative (``neg_*``):

* high-value mutating: two-system writes, an amount >= 10000 at each default JSON path, exactly
  10000, >= 20 steps | negatives 9999.99, many writes in one system, exactly 19 steps, long but
  read-only, a high amount whose only write failed, a high amount only in a read;
* recovery: retry of the same tool 1-3 steps later (exactly 3 included), the default alternative
  route | negatives never retried, retried 4 steps later, recovered but the run ended badly
  (failed, abandoned, reward 0, final state ``*_FAILED``), the retry failed too, an unrelated tool
  succeeded instead;
* human hand-off: a hand-off tool, a ``kind: handoff`` step, the outcome flag, intent confidence
  < 0.5 (0.49 included), the agent's low-confidence flag | negatives confidence exactly 0.5, a
  look-alike escalation *ticket* tool, a hand-off that the customer declined.

The truth file's funnel membership is ``Scenario.funnels``: derived from the component names,
never from running funnel code. Background families (all ``none``) touch at most one system with
writes, keep every amount < 10000, stay under 20 steps and have no failure or hand-off signal.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from golden_distill.synthetic.catalogue import (
    ALL_READS,
    ALTERNATIVES,
    AMOUNT_WRITES,
    FAILABLE_READS,
    HANDOFF_TOOLS,
    READ_TOOLS,
    TOOLS,
    WRITE_SYSTEMS,
    WRITE_TOOLS,
)

HIGH_VALUE = "high_value_mutating"
RECOVERY = "recovery"
HANDOFF = "human_handoff"
REDACTED = "redacted"
SELECTION_FUNNELS: tuple[str, ...] = (HIGH_VALUE, RECOVERY, HANDOFF)

HV_WEIGHTS: dict[str, float] = {
    "none": 0.60,
    "pos_two_systems": 0.06,
    "pos_amount_high": 0.05,
    "pos_amount_edge": 0.02,
    "pos_long": 0.03,
    "neg_edge_amount": 0.05,
    "neg_single_system_many_writes": 0.05,
    "neg_19_steps": 0.03,
    "neg_long_no_write": 0.03,
    "neg_failed_write": 0.04,
    "neg_amount_in_read": 0.04,
}
REC_WEIGHTS: dict[str, float] = {
    "none": 0.66,
    "pos_same": 0.08,
    "pos_same_at_3": 0.03,
    "pos_alternative": 0.04,
    "neg_never_retried": 0.05,
    "neg_late_retry": 0.04,
    "neg_ended_failed": 0.05,
    "neg_retry_failed": 0.03,
    "neg_non_alternative": 0.02,
}
HO_WEIGHTS: dict[str, float] = {
    "none": 0.68,
    "pos_tool": 0.06,
    "pos_kind": 0.03,
    "pos_flag": 0.03,
    "pos_intent_low": 0.04,
    "pos_low_conf": 0.03,
    "neg_conf_edge": 0.05,
    "neg_lookalike": 0.04,
    "neg_declined": 0.04,
}
_HV_ONE_SYSTEM_NEG = {
    "neg_edge_amount",
    "neg_single_system_many_writes",
    "neg_19_steps",
    "neg_failed_write",
    "neg_amount_in_read",
    "neg_long_no_write",
}
_BAD_ENDS = ("failed", "abandoned", "reward_zero", "state_failed")


@dataclass(frozen=True, slots=True)
class StepSpec:
    tool: str
    status: str = "ok"  # ok | error | timeout
    kind: str = "tool"
    amount: str = "low"  # amount mode of a write: low | high | edge_high | edge_low


@dataclass(frozen=True, slots=True)
class Scenario:
    hv: str
    rec: str
    ho: str
    steps: tuple[StepSpec, ...]
    end: str  # success | handed_off | failed | abandoned | reward_zero | state_failed
    conf_mode: str  # normal | low | edge_low | edge_ok | absent
    amount_read_high: bool

    @property
    def funnels(self) -> tuple[str, ...]:
        out = []
        if self.hv.startswith("pos"):
            out.append(HIGH_VALUE)
        if self.rec.startswith("pos"):
            out.append(RECOVERY)
        if self.ho.startswith("pos"):
            out.append(HANDOFF)
        return tuple(out)

    @property
    def main_tool(self) -> str:
        for s in self.steps:
            if s.kind == "tool" and TOOLS[s.tool].mutating:
                return s.tool
        return next(s.tool for s in self.steps if s.kind == "tool")

    @property
    def label(self) -> str:
        return f"hv={self.hv},rec={self.rec},ho={self.ho}"


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def choose_components(rng: random.Random) -> tuple[str, str, str]:
    """Draw the three components, resolving the few combinations that would blur the truth."""
    hv, rec, ho = _pick(rng, HV_WEIGHTS), _pick(rng, REC_WEIGHTS), _pick(rng, HO_WEIGHTS)
    if hv == "neg_failed_write" and rec.startswith("pos"):
        rec = "none"  # its unretried failed write ends the run badly: no recovery possible
    if ho == "neg_lookalike" and hv in _HV_ONE_SYSTEM_NEG:
        ho = "none"  # the ticket write would add a second system or a write to a read-only run
    return hv, rec, ho


def background_components() -> tuple[str, str, str]:
    return "none", "none", "none"


def _reads_of(system: str) -> tuple[str, ...]:
    return READ_TOOLS.get(system, ())


def _writes_segment(rng: random.Random, hv: str, ho: str) -> list[StepSpec]:
    if hv == "pos_two_systems":
        systems = rng.sample(WRITE_SYSTEMS, rng.choice((2, 2, 3)))
        return [StepSpec(rng.choice(WRITE_TOOLS[s])) for s in systems]
    if hv in ("pos_amount_high", "pos_amount_edge", "neg_edge_amount", "neg_failed_write"):
        tool = rng.choice(AMOUNT_WRITES)
        mode = {
            "pos_amount_high": "high",
            "pos_amount_edge": "edge_high",
            "neg_edge_amount": "edge_low",
            "neg_failed_write": "high",
        }[hv]
        status = rng.choice(("error", "timeout")) if hv == "neg_failed_write" else "ok"
        steps = [StepSpec(tool, status=status, amount=mode)]
        if hv.startswith("pos") and rng.random() < 0.4:
            steps.append(StepSpec(rng.choice(WRITE_TOOLS[TOOLS[tool].system or ""])))
        return steps
    if hv == "neg_long_no_write":
        return []
    system = rng.choice(WRITE_SYSTEMS)
    if ho == "neg_lookalike":
        system = "CRM"
    if hv == "neg_single_system_many_writes":
        return [StepSpec(rng.choice(WRITE_TOOLS[system])) for _ in range(rng.randint(3, 4))]
    if hv in ("none",) and ho != "neg_lookalike" and rng.random() < 0.3:
        return []  # read-only background run
    return [StepSpec(rng.choice(WRITE_TOOLS[system])) for _ in range(rng.randint(1, 2))]


def _recovery_segment(rng: random.Random, rec: str) -> tuple[list[StepSpec], set[str]]:
    """The failure (and its retry, if any), plus the tools no other step may use."""
    if rec == "none":
        return [], set()
    if rec in ("pos_alternative", "neg_non_alternative"):
        failed = "erp_get_order"
    else:
        failed = rng.choice(FAILABLE_READS)
    banned = {failed, *ALTERNATIVES.get(failed, ())}
    system = TOOLS[failed].system
    fillers = [t for t in ALL_READS if TOOLS[t].system != system and t not in banned]
    bad = rng.choice(("error", "timeout"))

    def fill(n: int) -> list[StepSpec]:
        return [StepSpec(rng.choice(fillers)) for _ in range(n)]

    seg = [StepSpec(failed, status=bad)]
    if rec in ("pos_same", "neg_ended_failed"):
        seg += [*fill(rng.randint(0, 2)), StepSpec(failed)]
    elif rec == "pos_same_at_3":
        seg += [*fill(2), StepSpec(failed)]
    elif rec == "pos_alternative":
        seg += [*fill(rng.randint(0, 2)), StepSpec("erp_search_orders")]
    elif rec == "neg_never_retried":
        seg += fill(rng.randint(1, 2))
    elif rec == "neg_late_retry":
        seg += [*fill(3), StepSpec(failed)]
    elif rec == "neg_retry_failed":
        seg += [StepSpec(failed, status=bad), *fill(rng.randint(1, 2))]
    elif rec == "neg_non_alternative":
        seg += [StepSpec("crm_get_customer"), *fill(rng.randint(0, 1))]
    return seg, banned


def build_scenario(rng: random.Random, hv: str, rec: str, ho: str) -> Scenario:
    """One family's trajectory: pre-reads, the recovery segment, writes, the hand-off step."""
    writes = _writes_segment(rng, hv, ho)
    rec_seg, banned = _recovery_segment(rng, rec)
    if ho == "neg_lookalike":
        writes.append(StepSpec("crm_create_escalation_ticket"))
    read_pool = [t for t in ALL_READS if t not in banned and t != "erp_search_orders"]
    home = TOOLS[writes[0].tool].system if writes else rng.choice(WRITE_SYSTEMS)
    home_reads = [t for t in _reads_of(home or "") if t not in banned] or read_pool
    pre = [StepSpec(rng.choice(home_reads)) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.3:
        pre.append(StepSpec("kb_search"))
    if hv == "neg_amount_in_read" and "fin_get_invoice" not in banned:
        pre.append(StepSpec("fin_get_invoice"))
    tail: list[StepSpec] = []
    if ho == "pos_tool":
        tail.append(StepSpec(rng.choice(HANDOFF_TOOLS)))
    elif ho == "pos_kind":
        tail.append(StepSpec("route_to_human_queue", kind="handoff"))
    core = len(pre) + len(rec_seg) + len(writes) + len(tail)
    target = {
        "pos_long": rng.randint(20, 26),
        "neg_19_steps": 19,
        "neg_long_no_write": rng.randint(20, 24),
    }.get(hv)
    if target is not None and core < target:
        pre = [StepSpec(rng.choice(read_pool)) for _ in range(target - core)] + pre
    steps = tuple(pre + rec_seg + writes + tail)
    if target is None and len(steps) >= 20:
        raise AssertionError("a short scenario grew to 20 steps")  # construction invariant
    if rec == "neg_ended_failed":
        end = rng.choice(_BAD_ENDS)
    elif hv == "neg_failed_write":
        end = "failed"
    elif ho in ("pos_tool", "pos_kind", "pos_flag"):
        end = "handed_off"
    else:
        end = "success"
    conf_mode = "normal"
    if ho == "pos_intent_low":
        conf_mode = rng.choice(("low", "edge_low"))
    elif ho == "neg_conf_edge":
        conf_mode = "edge_ok"
    elif rng.random() < 0.03:
        conf_mode = "absent"
    return Scenario(hv, rec, ho, steps, end, conf_mode, hv == "neg_amount_in_read")


def amount_for(mode: str, rng: random.Random) -> float:
    """An amount on the planted side of the 10000 threshold (2 decimals, always a number)."""
    if mode == "high":
        return round(rng.uniform(10_000.01, 250_000), 2)
    if mode == "edge_high":
        return 10000
    if mode == "edge_low":
        return 9999.99
    return round(rng.uniform(5, 9_500), 2)


def confidence_for(mode: str, rng: random.Random) -> float | None:
    if mode == "low":
        return round(rng.uniform(0.05, 0.45), 2)
    if mode == "edge_low":
        return 0.49
    if mode == "edge_ok":
        return 0.5
    if mode == "absent":
        return None
    return round(rng.uniform(0.55, 0.99), 2)
