"""Exports: Chronicle envelopes that agent-chronicle itself loads and replays (tools become
Chronicle boundaries that return the golden response without running; a recorded error comes
back as Chronicle's RecordedCallError). chat-jsonl: test_export_chat.py."""

from __future__ import annotations

import orjson
import pytest

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay.export import export_cases

chronicle = pytest.importorskip("chronicle")  # the test dependency (agent-chronicle)
from agentplane_primitives.models import Envelope  # noqa: E402


def _with_error(golden):
    for replay_case in golden.cases():
        case = replay_case.case
        if any(s.status != "ok" for s in case.steps) and len(case.steps) >= 3:
            return case
    raise AssertionError("no case with a recorded error")


def test_chronicle_replays_the_golden_responses(generated_set, tmp_path) -> None:
    golden = open_set(*generated_set)
    case = _with_error(golden)
    [path] = list(export_cases([case], "chronicle", tmp_path))
    envelopes = [Envelope.model_validate_json(line) for line in path.read_bytes().splitlines()]
    steps = sorted(case.steps, key=lambda s: s.seq)
    assert [e.name for e in envelopes] == [s.name for s in steps]
    assert [e.metadata["chronicle.sequence"] for e in envelopes] == list(range(1, len(steps) + 1))
    assert [e.metadata["chronicle.invocation_index"] for e in envelopes] == [
        s.occurrence for s in steps
    ]
    executed: list[str] = []
    boundaries = {}
    for name in {s.name for s in steps}:

        def tool(_name=name, **arguments):
            executed.append(_name)  # never reached: Chronicle serves the recording
            raise AssertionError("a stubbed tool ran")

        boundaries[name] = chronicle.boundary(name, kind="tool")(tool)

    outcomes = []
    with chronicle.replay(envelopes) as run:
        for step in steps:
            arguments = orjson.loads(step.arguments) if step.arguments else {}
            try:
                outcomes.append(("ok", boundaries[step.name](**arguments)))
            except chronicle.RecordedCallError as err:
                outcomes.append(("error", err))
    assert executed == []
    assert len(run.call_log()) == len(steps)
    for step, (kind, value) in zip(steps, outcomes, strict=True):
        if step.status == "ok":
            assert kind == "ok" and _plain(value) == orjson.loads(step.response)
        else:
            assert kind == "error" and value.name == step.name
            assert value.invocation_index == step.occurrence


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
