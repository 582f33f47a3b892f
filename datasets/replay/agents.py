"""Reference agents: the re-issuing agent (replays the recorded calls and returns the recorded
outcome) measures the harness itself and is the zero-diff baseline of the tests; ``golden replay
--agent golden_distill.datasets.replay.agents:reissue`` runs it from the command line."""

from __future__ import annotations

import contextlib

from golden_distill.datasets.replay.contract import (
    AgentResult,
    ReplayInput,
    ToolCallError,
    ToolStub,
)


def reissue(case: ReplayInput, tools: ToolStub) -> AgentResult:
    """Make every recorded call again, in order, and end as the recording did."""
    for call in case.baseline_calls:
        # a recorded failure: the recording went on, so does the agent
        with contextlib.suppress(ToolCallError):
            tools.call(call.name, call.arguments)
    return AgentResult(
        final_state=case.recorded_final_state, answer=case.recorded_answer, intent=case.intent
    )
