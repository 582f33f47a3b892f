"""Reference agents: the re-issuing agent (replays the recorded calls, model and route steps
included, and returns the recorded outcome) measures the harness itself and is the zero-diff
baseline of the tests; ``golden replay --agent golden_distill.datasets.replay.agents:reissue``
runs it from the command line."""

from __future__ import annotations

import contextlib

from golden_distill.datasets.replay.contract import (
    AgentResult,
    BaselineCall,
    ReplayInput,
    ToolCallError,
    ToolStub,
)


def reissue(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """Make every recorded call again, in order, and end as the recording did."""
    calls = case.baseline_calls
    if case.baseline_boundaries:  # model and route steps in their recorded places
        calls = tuple(sorted((*calls, *case.baseline_boundaries), key=_seq))
    for call in calls:
        # a recorded failure: the recording went on, so does the agent
        with contextlib.suppress(ToolCallError):
            kind = call.kind
            if kind == "model":
                tools.llm.complete(call.arguments)
            elif kind == "route":
                tools.route(call.name, call.arguments)
            else:
                tools.call(call.name, call.arguments)
    return AgentResult(
        final_state=case.recorded_final_state, answer=case.recorded_answer, intent=case.intent
    )


def _seq(call: BaselineCall) -> int:
    return call.seq
