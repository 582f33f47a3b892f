"""One chat transcript (OpenAI-style message list) -> one canonical case row.

Assistant turns carry ``tool_calls`` (``function.name``, ``arguments`` as JSON text or an object);
``role: "tool"`` turns answer them by ``tool_call_id``. Each call becomes a tool step, in the order
the assistant made them, with the matching reply as its response. A reply is an error when the
source flags it (``error``) or its text matches a configured pattern (tau-bench writes
``Error: ...``), which is how the recovery funnel finds failed calls in transcripts.

Pure: no I/O, raises ``RecordProblem`` for a transcript that cannot be a case.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import orjson

from golden_distill.datasets.quarantine import MISSING_FIELD, ORPHAN_TOOL_REPLY, WRONG_TYPE
from golden_distill.datasets.sources.case_rows import (
    MALFORMED_ARGUMENTS,
    RecordProblem,
    StepFinisher,
    expected_row,
    json_text,
    new_step,
    set_arguments,
    to_utc,
)
from golden_distill.datasets.sources.chat_golden import (
    RECORDED,
    apply_golden,
    golden_facts,
    turn_start,
)

#: Metadata keys read from a JSONL transcript (or a tau-bench run), first present wins.
_META_KEYS: dict[str, tuple[str, ...]] = {
    "trace_id": ("trace_id", "traceId", "id"),
    "session_id": ("session_id", "sessionId", "conversation_id"),
    "tenant_id": ("tenant_id", "tenantId"),
    "user_id": ("user_id", "userId"),
    "agent_version": ("agent_version", "agentVersion"),
    "model_name": ("model", "model_name"),
    "status": ("status", "final_status"),
    "recorded_at": ("recorded_at", "recordedAt", "created_at", "timestamp"),
}


def _meta(meta: dict[str, Any], name: str) -> Any:
    for key in _META_KEYS[name]:
        value = meta.get(key)
        if value is not None:
            return value
    return None


def message_text(content: Any) -> str | None:
    """The text of a message: a string, or the text parts of a content-part list."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


class TranscriptConverter:
    """Converts message lists to case rows with one config's patterns, catalogue and hand-offs."""

    def __init__(
        self,
        finisher: StepFinisher,
        error_patterns: Sequence[str],
        *,
        keep_malformed: bool = False,
        python_literals: bool = False,
    ) -> None:
        self.finisher = finisher
        self.error_patterns = [re.compile(p) for p in error_patterns]
        self.keep_malformed = keep_malformed
        #: calls whose non-JSON arguments were kept as a JSON string (keep_malformed only)
        self.malformed_kept = 0
        self.python_literals = python_literals
        #: calls whose arguments were Python literals, read with ast.literal_eval
        self.literals_read = 0

    def is_error_reply(self, message: dict[str, Any], text: str | None) -> bool:
        flag = message.get("error")
        if flag is not None and flag is not False:
            return True
        return text is not None and any(p.search(text) for p in self.error_patterns)

    def fill(self, row: dict[str, Any], messages: Any, meta: dict[str, Any]) -> dict[str, Any]:
        """Fill ``row`` (from ``new_case_row``) from ``messages`` and run ``meta``."""
        if not isinstance(messages, list):
            raise RecordProblem(WRONG_TYPE, "messages is not a list")
        self._fill_meta(row, meta)
        golden = golden_facts(meta)
        start = turn_start(golden)
        steps: list[dict[str, Any]] = []
        call_ids: list[str | None] = []
        # Unanswered calls by id, oldest first: recorders (tau-bench among them) reuse ids
        # across turns, so a reply answers the oldest call with its id still waiting.
        pending: dict[str, list[dict[str, Any]]] = {}
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                raise RecordProblem(WRONG_TYPE, f"messages[{i}] is not an object")
            role = message.get("role")
            text = message_text(message.get("content"))
            if role == "system" and row["agent"]["system_prompt_version"] is None and text:
                digest = hashlib.sha256(text.encode()).hexdigest()
                row["agent"]["system_prompt_version"] = f"sha256:{digest}"
            elif i < start:  # an earlier turn: context only
                continue
            elif role == "user" and row["user_input"] is None and text is not None:
                row["user_input"] = text
            elif role == "assistant":
                for j, call in enumerate(message.get("tool_calls") or []):
                    step = self._call_step(call, len(steps), f"messages[{i}].tool_calls[{j}]")
                    steps.append(step)
                    call_ids.append(_opt_str(call.get("id")))
                    if call.get("id") is not None:
                        pending.setdefault(str(call["id"]), []).append(step)
                if not message.get("tool_calls") and text:
                    row["outcome"]["answer_text"] = text
            elif role == "tool":
                call_id = _opt_str(message.get("tool_call_id"))
                waiting = pending.get(call_id) if call_id is not None else None
                if not waiting:
                    raise RecordProblem(
                        ORPHAN_TOOL_REPLY, f"messages[{i}] answers no earlier tool call"
                    )
                self._reply(waiting.pop(0), message, text)
        if golden is not None:  # a golden-distill export: the facts a transcript cannot hold
            steps = apply_golden(steps, call_ids, golden, row)
        row["steps"] = steps
        row["context"]["messages"] = orjson.dumps(
            [m for m in messages if m.get("role") != "system"]
        ).decode()
        self.finisher.finish(row, recorded=RECORDED if golden is not None else ())
        row["expected"] = self._expected(meta)
        if row["outcome"]["handoff"] and golden is None:
            row["outcome"]["handoff_reason"] = handoff_reason(steps)
        return row

    def _expected(self, meta: dict[str, Any]) -> dict[str, Any] | None:
        """tau-bench's task ``actions`` (writes only) and ``outputs``, or a JSONL transcript's
        own ``expected`` object (what ``golden export --format chat-jsonl`` writes)."""
        task = meta.get("task")
        if isinstance(task, dict):
            actions = []
            for i, action in enumerate(task.get("actions") or []):
                if not isinstance(action, dict) or not isinstance(action.get("name"), str):
                    raise RecordProblem(WRONG_TYPE, f"info.task.actions[{i}] has no name")
                if self.finisher.catalogue.lookup(action["name"]).is_mutating is False:
                    continue  # a read the grader lists: not an expected write
                actions.append((action["name"], action.get("kwargs") or {}))
            outputs = task.get("outputs") or []
            return expected_row(
                "tau_bench_task", None, actions, [str(o) for o in outputs], keep_empty=True
            )
        given = meta.get("expected")
        if not isinstance(given, dict):
            return None
        actions = []
        for i, action in enumerate(given.get("actions") or []):
            if not isinstance(action, dict) or not isinstance(action.get("name"), str):
                raise RecordProblem(WRONG_TYPE, f"expected.actions[{i}] has no name")
            args = action.get("arguments")
            if isinstance(args, str):
                try:
                    args = orjson.loads(args)
                except orjson.JSONDecodeError:
                    raise RecordProblem(
                        WRONG_TYPE, f"expected.actions[{i}].arguments is not JSON"
                    ) from None
            actions.append((action["name"], args))
        state = given.get("final_state")
        return expected_row(
            str(given.get("source") or "review"),
            None if state is None else str(state),
            actions,
            given.get("answer_facts") or [],
            keep_empty=given.get("source") is not None,
        )

    def _fill_meta(self, row: dict[str, Any], meta: dict[str, Any]) -> None:
        for name in ("trace_id", "session_id", "tenant_id", "user_id"):
            value = _meta(meta, name)
            if value is not None:
                row[name] = str(value)
        row["agent"]["agent_version"] = _opt_str(_meta(meta, "agent_version"))
        row["agent"]["model_name"] = _opt_str(_meta(meta, "model_name"))
        row["outcome"]["status"] = _opt_str(_meta(meta, "status"))
        row["recorded_at"] = to_utc(_meta(meta, "recorded_at"))
        reward = meta.get("reward")
        if isinstance(reward, int | float) and not isinstance(reward, bool):
            row["outcome"]["reward"] = float(reward)
        turn = meta.get("turn_index")
        if isinstance(turn, int) and not isinstance(turn, bool):
            row["turn_index"] = turn

    def _call_step(self, call: Any, seq: int, where: str) -> dict[str, Any]:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            raise RecordProblem(WRONG_TYPE, f"{where} has no function object")
        function = call["function"]
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise RecordProblem(MISSING_FIELD, f"{where}.function.name is missing")
        step = new_step(seq, "tool", name)
        verdict = set_arguments(
            step,
            function.get("arguments"),
            keep_malformed=self.keep_malformed,
            python_literals=self.python_literals,
        )
        self.literals_read += verdict == "literal"
        if verdict == "malformed":
            raise RecordProblem(MALFORMED_ARGUMENTS, f"{where}.function.arguments")
        if verdict == "kept":
            self.malformed_kept += 1
        return step

    def _reply(self, step: dict[str, Any], message: dict[str, Any], text: str | None) -> None:
        content = message.get("content")
        step["response"] = json_text(content if text is None else text)
        if self.is_error_reply(message, text):
            step["status"] = "error"
            flag = message.get("error")
            step["error"] = flag if isinstance(flag, str) else (text or "error")


def handoff_reason(steps: list[dict[str, Any]]) -> str | None:
    """The hand-off call's own ``reason``/``summary`` argument, when it gave one."""
    for step in steps:
        if step["kind"] != "handoff" or not step["arguments"]:
            continue
        try:
            args = orjson.loads(step["arguments"])
        except orjson.JSONDecodeError:
            continue
        if isinstance(args, dict):
            for key in ("reason", "summary"):
                if isinstance(args.get(key), str):
                    return args[key]
    return None
