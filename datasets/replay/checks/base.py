"""What every replay check shares: the case's context (what was recorded, what the replay did,
the alignment of the two) and the per-case counts the gate adds up.

A check is a class with a ``name``, built once per run from the config, whose
``run(ctx) -> list[Diff]`` returns the rows it finds (``ctx.diff(...)`` makes one with the right
severity) and may update the counts on ``ctx.check``. ``on_fast_path = False`` (the default)
skips it when the replay made exactly the recorded calls, in order, each an exact match: then
sequence and parameters can find nothing and the state is the recorded one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import orjson

from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.replay.config import ReplayConfig
from golden_distill.datasets.replay.contract import AgentResult
from golden_distill.datasets.replay.diffs import Diff, severity_of
from golden_distill.datasets.replay.normalise import Normaliser
from golden_distill.datasets.replay.stubs import ESCAPE, EXACT, ServedCall, VirtualTools

_SHOWN_CHARS = 4000


@dataclass(slots=True)
class CaseCheck:
    """The diffs of one case and the counts the gate adds up over the run."""

    case_id: str
    diffs: list[Diff] = field(default_factory=list)
    aligned: int = 0  # aligned (recorded, replayed) call pairs
    aligned_equal: int = 0  # ... whose parameters are equal
    recorded_calls: int = 0
    replayed_calls: int = 0
    recorded_tokens: int | None = None
    replayed_tokens: int | None = None
    final_state_checked: bool = False
    final_state_ok: bool = True
    #: what the final state was judged on: "state" (the state the writes leave), "label" (the
    #: agent's final-state label: no state could be derived) or None (not judged)
    final_state_basis: str | None = None
    stub_escapes: int = 0
    #: with ``--repeat N``: in how many of the N replays the case had no difference
    reproduced: int | None = None
    repeats: int | None = None
    #: rows seen in fewer than ``gate.repeat.min_diff_ratio`` of the repeats (not counted)
    below_ratio: list[Diff] = field(default_factory=list)
    #: calls whose parameters a stage-2 tolerance made equal, per tolerance
    tolerated: dict[str, int] = field(default_factory=dict)

    @property
    def flaky(self) -> bool:
        """The repeats disagreed: some replays differ from others."""
        if self.repeats is None or self.repeats < 2:
            return False
        return 0 < (self.reproduced or 0) < self.repeats or any(
            d.seen is not None and d.seen < self.repeats for d in self.diffs
        )


def show_call(name: str, arguments: Any) -> str:
    text = f"{name}({orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS, default=str).decode()})"
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


class CheckContext:
    """One replayed case as the checks see it."""

    def __init__(
        self,
        case: Case,
        tools: VirtualTools,
        result: AgentResult | None,
        agent_error: str | None,
        config: ReplayConfig,
        normaliser: Normaliser,
        agent_traceback: str | None = None,
    ) -> None:
        self.case = case
        self.tools = tools
        self.result = result
        self.agent_error = agent_error
        self.agent_traceback = agent_traceback
        self.config = config
        self.normaliser = normaliser
        self.check = CaseCheck(case.case_id)
        self.baseline: list[Step] = tools.steps
        self.log: list[ServedCall] = tools.log
        self.check.recorded_calls, self.check.replayed_calls = len(self.baseline), len(self.log)

    def diff(self, kind: str, detail: str, *, write: bool = False, **sides: Any) -> Diff:
        severity = severity_of(kind, write, self.config.severity)
        return Diff(self.case.case_id, self.case.trace_id, kind, detail, severity, write, **sides)

    @cached_property
    def as_recorded(self) -> bool:
        """The replay made exactly the recorded calls, in order, each an exact match."""
        log, baseline = self.log, self.baseline
        if len(log) != len(baseline):
            return False
        for c, s in zip(log, baseline, strict=True):
            if c.match != EXACT or c.recorded_seq != s.seq:
                return False
        return True

    @cached_property
    def position(self) -> dict[int, int]:
        """Recorded seq -> its 1-based place among the recorded tool calls."""
        return {s.seq: i for i, s in enumerate(self.baseline, 1)}

    @cached_property
    def alignment(self) -> tuple[list[tuple[Step, ServedCall]], list[Step], list[ServedCall]]:
        """(recorded, replayed) pairs; recorded calls never made; replayed calls with no
        partner (the stub's match first, else the tool's next unaligned recording)."""
        baseline = self.baseline
        by_seq = {s.seq: s for s in baseline}
        taken: set[int] = set()
        pairs: list[tuple[Step, ServedCall]] = []
        loose: list[ServedCall] = []
        for call in self.log:
            if call.match == ESCAPE:
                continue
            if call.recorded_seq is not None and call.recorded_seq not in taken:
                taken.add(call.recorded_seq)
                pairs.append((by_seq[call.recorded_seq], call))
            else:
                loose.append(call)
        extra = []
        for call in loose:
            partner = next((s for s in baseline if s.name == call.name and s.seq not in taken),
                           None)  # fmt: skip
            if partner is None:
                extra.append(call)
            else:
                taken.add(partner.seq)
                pairs.append((partner, call))
        missing = [s for s in baseline if s.seq not in taken]
        return pairs, missing, extra

    def rows_of_step(self, seq: int) -> Diff | None:
        """The layer 1-2 row already reported for recorded step ``seq``."""
        return next((d for d in self.check.diffs if d.extra.get("step_seq") == seq), None)

    def rows_of_call(self, index: int) -> Diff | None:
        """The layer 1-2 row already reported for replayed call ``index`` (0-based)."""
        return next((d for d in self.check.diffs if d.extra.get("call_index") == index), None)


class Check:
    """One registered check (see the module docstring)."""

    name: ClassVar[str] = ""
    on_fast_path: ClassVar[bool] = False

    def __init__(self, config: ReplayConfig, normaliser: Normaliser) -> None:
        self.config = config
        self.normaliser = normaliser

    def run(self, ctx: CheckContext) -> list[Diff]:
        raise NotImplementedError
