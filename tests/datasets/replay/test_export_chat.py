"""chat-jsonl exports: valid OpenAI chat messages (no key the message types lack, tool errors as
content strings, the system prompt and earlier turns, a `tools` list), and `golden export` then
`golden ingest --format chat` gives back every published case field by field."""

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

#: Keys of openai-python 1.x/2.x ``ChatCompletion{System,Developer,User,Assistant,Tool}
#: MessageParam``, ``ChatCompletionMessageToolCallParam``, ``ChatCompletionToolParam`` and
#: ``FunctionDefinition`` (checked against openai 3.60.0's TypedDicts).
ALLOWED = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio", "function_call"},
    "tool": {"role", "content", "tool_call_id"},
}
TOOL_CALL_KEYS = {"id", "type", "function"}
FUNCTION_KEYS = {"name", "arguments"}
TOOL_KEYS = {"type", "function"}
DEFINITION_KEYS = {"name", "description", "parameters", "strict"}

runner = CliRunner()


def _check_openai_messages(record: dict) -> None:
    declared = set()
    for tool in record["tools"]:
        assert set(tool) <= TOOL_KEYS and tool["type"] == "function"
        assert set(tool["function"]) <= DEFINITION_KEYS
        assert tool["function"]["parameters"]["type"] == "object"
        declared.add(tool["function"]["name"])
    open_calls: set[str] = set()
    for message in record["messages"]:
        role = message["role"]
        assert set(message) <= ALLOWED[role], (role, set(message) - ALLOWED[role])
        if role == "tool":
            assert isinstance(message["content"], str)
            assert message["tool_call_id"] in open_calls
            open_calls.discard(message["tool_call_id"])
        elif role == "assistant" and "tool_calls" in message:
            for call in message["tool_calls"]:
                assert set(call) == TOOL_CALL_KEYS and call["type"] == "function"
                assert set(call["function"]) == FUNCTION_KEYS
                assert isinstance(call["function"]["arguments"], str)
                assert call["function"]["name"] in declared
                open_calls.add(call["id"])
        else:
            assert isinstance(message["content"], str)
    assert not open_calls


def _cases(golden) -> list[Case]:
    return [c.case for c in golden.cases()]


@pytest.mark.parametrize("which", ["generated_set", "tau_set"])
def test_export_is_valid_openai_chat(which, request, tmp_path) -> None:
    cases = _cases(open_set(*request.getfixturevalue(which)))
    paths = list(export_cases(cases, "chat-jsonl", tmp_path))
    errors = system_prompts = earlier_turns = 0
    for case, path in zip(cases, paths, strict=True):
        record = orjson.loads(path.read_bytes())
        _check_openai_messages(record)
        replies = [m for m in record["messages"] if m["role"] == "tool"]
        failed = [s for s in sorted(case.steps, key=lambda s: s.seq) if s.status != "ok"]
        for step in failed:
            [reply] = [m for m in replies if m["tool_call_id"] == f"call_{step.seq}"]
            assert reply["content"].startswith("Error:") or reply["content"] == step.error
            assert step.error is None or step.error in reply["content"]
            errors += 1
        system_prompts += record["messages"][0]["role"] == "system"
        start = record["metadata"]["golden"]["turn_start"]
        assert record["messages"][start] == {"role": "user", "content": case.user_input or ""}
        earlier_turns += any(m["role"] == "user" for m in record["messages"][:start])
    assert errors > 0
    if which == "generated_set":  # native recordings carry the prompt and earlier turns
        assert system_prompts > 0 and earlier_turns > 0


def _comparable(case: Case) -> dict:
    row = case.to_row()
    for name in ("case_id", "source"):
        row.pop(name)
    row["context"].pop("messages")  # the transcript itself: compared in the test above
    return row


@pytest.mark.parametrize("which", ["generated_set", "tau_set"])
def test_ingest_of_an_export_gives_back_every_case(which, request, tmp_path) -> None:
    store, ref = request.getfixturevalue(which)
    out = tmp_path / "export"
    result = runner.invoke(
        app, ["export", ref, "--store", store, "--format", "chat-jsonl", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app, ["ingest", str(out), "--format", "chat", "--out", str(tmp_path / "back")]
    )
    assert result.exit_code == 0, result.output
    back = pa.concat_tables(
        [pq.read_table(p) for p in sorted((tmp_path / "back" / "cases").glob("*.parquet"))]
    )
    by_file = {}
    for row in back.to_pylist():
        by_file[row["source"]["uri"].rsplit("/", 1)[-1].removesuffix(".jsonl")] = row
    cases = _cases(open_set(store, ref))
    assert len(by_file) == len(cases)
    kinds = set()
    for case in cases:
        read = Case.from_row(by_file[case.case_id])
        want, got = _comparable(case), _comparable(read)
        for name in want:
            assert got[name] == want[name], (case.case_id, name)
        kinds |= {(s.kind, s.status, s.is_mutating) for s in case.steps}
    # the set exercises what a transcript alone would lose
    assert {k for k, _, _ in kinds} >= {"tool", "handoff"}
    if which == "generated_set":
        assert {s for _, s, _ in kinds} == {"ok", "error", "timeout"}
