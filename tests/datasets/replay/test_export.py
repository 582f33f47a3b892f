"""Exports: Chronicle envelopes that agent-chronicle itself loads and replays (tools become
Chronicle boundaries that return the golden response without running; a recorded error comes
back as Chronicle's RecordedCallError). chat-jsonl: test_export_chat.py."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from golden_distill.datasets.case import Case
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay.export import export_cases
from golden_distill.flows.cli import app

chronicle = pytest.importorskip("chronicle")  # the test dependency (agent-chronicle)
from agentplane_primitives.models import Envelope  # noqa: E402

runner = CliRunner()


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


def _step_fields(step) -> tuple:
    return (
        step.seq, step.kind, step.name, step.occurrence, orjson.loads(step.arguments or "null"),
        step.canonical_args_sha256, orjson.loads(step.response or "null"), step.status,
        step.error, step.is_mutating, step.system, step.latency_ms, step.tokens, step.started_at,
    )  # fmt: skip


@pytest.mark.parametrize("which", ["generated_set", "tau_set"])
def test_chronicle_export_reads_back_to_the_same_steps(which, request, tmp_path) -> None:
    """`golden export --format chronicle`, then `golden ingest` (the format recognised from the
    files): every case's steps come back field by field, from envelopes Chronicle accepts."""
    store, ref = request.getfixturevalue(which)
    out = tmp_path / "chronicle"
    result = runner.invoke(
        app, ["export", ref, "--store", store, "--format", "chronicle", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    for path in out.glob("*.jsonl"):
        for line in path.read_bytes().splitlines():
            Envelope.model_validate_json(line)
    result = runner.invoke(app, ["ingest", str(out), "--out", str(tmp_path / "back"), "--json"])
    assert result.exit_code == 0, result.output
    summary = orjson.loads((tmp_path / "back" / "summary.json").read_bytes())
    assert summary["quarantined"] == {} or sum(summary["quarantined"].values()) == 0
    back = pa.concat_tables(
        [pq.read_table(p) for p in sorted((tmp_path / "back" / "cases").glob("*.parquet"))]
    )
    by_file = {r["source"]["uri"].rsplit("/", 1)[-1][: -len(".jsonl")]: r for r in back.to_pylist()}
    cases = [c.case for c in open_set(store, ref).cases()]
    with_steps = [c for c in cases if c.steps]
    assert {r["source"]["format"] for r in by_file.values()} == {"chronicle"}
    assert len(by_file) == len(with_steps)  # a case without steps has no envelope
    statuses = set()
    for case in with_steps:
        read = Case.from_row(by_file[case.case_id])
        assert [_step_fields(s) for s in read.steps] == [
            _step_fields(s) for s in sorted(case.steps, key=lambda s: s.seq)
        ], case.case_id
        statuses |= {(s.kind, s.status) for s in case.steps}
    assert {k for k, _ in statuses} >= {"tool", "handoff"}
    if which == "generated_set":
        assert {s for _, s in statuses} == {"ok", "error", "timeout"}
