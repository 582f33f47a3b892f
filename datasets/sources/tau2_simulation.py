"""One tau2-bench simulation (``SimulationRun``) and its task -> one canonical case row.

tau2 (sierra-research/tau2-bench, ``src/tau2/data_model/simulation.py``, ``message.py``,
``tasks.py``) records a run as ``messages``: the agent's fixed greeting, then ``user``,
``assistant`` (``content``, ``tool_calls: [{id, name, arguments: object, requestor}]``,
``usage: {prompt_tokens, completion_tokens}``) and ``tool`` messages (``id`` = the call's id,
``content`` text, ``error: bool``). Each assistant message after the first user turn is a model
call: a ``model`` step (named by the agent's model, response ``{content, tool_calls,
finish_reason}``, tokens from ``usage``), and each tool call it made a ``tool`` step under it
(``parent_seq``), answered by its tool message. Calls the *user* simulator made
(``requestor: user``, tau2's telecom tools) are not the agent's boundaries: they stay in the
context messages only.

The task's ``evaluation_criteria`` is the expected outcome (``source: tau_bench_task``): its
``actions`` the agent must make (user-side actions and actions of tools the catalogue lists as
reads left out; ``compare_args``, when given, keeps only the arguments tau2 compares), its
``communicate_info`` the answer facts. ``reward_info.reward`` is the outcome's reward, the
``termination_reason`` its status.

Pure: raises ``RecordProblem`` naming the field (``messages[4].tool_calls[0].name``), never text.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from golden_distill.datasets.quarantine import MISSING_FIELD, ORPHAN_TOOL_REPLY, WRONG_TYPE
from golden_distill.datasets.sources.case_rows import (
    RecordProblem,
    StepFinisher,
    expected_row,
    json_text,
    new_step,
    set_arguments,
    to_utc,
)
from golden_distill.datasets.sources.chat_transcript import handoff_reason

#: The model step's name when the results name no agent model.
DEFAULT_MODEL = "llm"


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def run_facts(info: Any) -> dict[str, Any]:
    """What every simulation of a results file shares: the agent, its model, the policy."""
    info = info if isinstance(info, dict) else {}
    agent = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
    environment = info.get("environment_info")
    policy = environment.get("policy") if isinstance(environment, dict) else None
    prompt = None
    if isinstance(policy, str) and policy:
        prompt = "sha256:" + hashlib.sha256(policy.encode()).hexdigest()
    params = agent.get("llm_args")
    return {
        "agent_version": _opt_str(agent.get("implementation")),
        "model_name": _opt_str(agent.get("llm")),
        "model_params": None if params is None else orjson.dumps(params).decode(),
        "system_prompt_version": prompt,
        "domain": _opt_str(environment.get("domain_name")) if isinstance(environment, dict)
        else None,
    }  # fmt: skip


def task_expected(task: dict[str, Any], finisher: StepFinisher) -> dict[str, Any] | None:
    """The case's ``expected`` from a tau2 task's ``evaluation_criteria``."""
    criteria = task.get("evaluation_criteria")
    if criteria is None:
        return None
    if not isinstance(criteria, dict):
        raise RecordProblem(WRONG_TYPE, "task.evaluation_criteria")
    actions = []
    for i, action in enumerate(criteria.get("actions") or []):
        where = f"task.evaluation_criteria.actions[{i}]"
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            raise RecordProblem(WRONG_TYPE, f"{where}.name")
        if action.get("requestor", "assistant") != "assistant":
            continue  # the user simulator's action, not the agent's
        if finisher.catalogue.lookup(action["name"]).is_mutating is False:
            continue  # a read the reference trajectory makes: not an expected write
        arguments = action.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise RecordProblem(WRONG_TYPE, f"{where}.arguments")
        compare = action.get("compare_args")
        if isinstance(compare, list):  # tau2 compares only these
            arguments = {k: v for k, v in arguments.items() if k in compare}
        actions.append((action["name"], arguments))
    facts = criteria.get("communicate_info") or []
    return expected_row("tau_bench_task", None, actions, [str(f) for f in facts], keep_empty=True)


class SimulationConverter:
    """Fills a case row from one simulation, with one config's catalogue and hand-offs."""

    def __init__(self, finisher: StepFinisher) -> None:
        self.finisher = finisher

    def fill(
        self,
        row: dict[str, Any],
        simulation: dict[str, Any],
        task: dict[str, Any],
        run: dict[str, Any],
    ) -> dict[str, Any]:
        messages = simulation.get("messages")
        if messages is None:
            # a voice (full-duplex) run keeps ticks only: no turn-by-turn messages to read
            raise RecordProblem(MISSING_FIELD, "messages (a voice run's ticks are not read)")
        if not isinstance(messages, list):
            raise RecordProblem(WRONG_TYPE, "messages")
        sim_id = str(simulation["id"])
        row["trace_id"] = row["session_id"] = sim_id
        row["turn_index"] = 0
        row["recorded_at"] = to_utc(simulation.get("start_time") or simulation.get("timestamp"))
        agent = row["agent"]
        for name in ("agent_version", "model_name", "model_params", "system_prompt_version"):
            agent[name] = run[name]
        model = run["model_name"] or DEFAULT_MODEL
        row["steps"] = self._steps(messages, model, row)
        row["context"]["messages"] = orjson.dumps(_chat_messages(messages)).decode()
        outcome = row["outcome"]
        outcome["status"] = _opt_str(simulation.get("termination_reason"))
        reward_info = simulation.get("reward_info")
        if isinstance(reward_info, dict):
            outcome["reward"] = _number(reward_info.get("reward"))
        self.finisher.finish(row)
        if outcome["handoff"]:
            outcome["handoff_reason"] = handoff_reason(row["steps"])
        row["expected"] = task_expected(task, self.finisher)
        return row

    def _steps(self, messages: list[Any], model: str, row: dict[str, Any]) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = []
        pending: dict[str, list[dict[str, Any]]] = {}  # call id -> unanswered agent calls
        user_calls: set[str] = set()
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                raise RecordProblem(WRONG_TYPE, f"messages[{i}] is not an object")
            role = message.get("role")
            content = message.get("content")
            if role == "user":
                if row["user_input"] is None and isinstance(content, str):
                    row["user_input"] = content
                for call in message.get("tool_calls") or []:
                    if isinstance(call, dict) and call.get("id") is not None:
                        user_calls.add(str(call["id"]))
            elif role == "assistant" and row["user_input"] is not None:
                self._assistant(message, i, model, steps, pending, user_calls, row)
            elif role == "tool":
                call_id = _opt_str(message.get("id"))
                if call_id in user_calls or message.get("requestor") == "user":
                    continue  # answers the user simulator's own tool
                waiting = pending.get(call_id) if call_id is not None else None
                if not waiting and row["user_input"] is None:
                    continue  # history before the run (tau2's initial message history)
                if not waiting:
                    raise RecordProblem(ORPHAN_TOOL_REPLY, f"messages[{i}].id answers no call")
                _reply(waiting.pop(0), message, i)
        return steps

    @staticmethod
    def _assistant(
        message: dict[str, Any],
        i: int,
        model: str,
        steps: list[dict[str, Any]],
        pending: dict[str, list[dict[str, Any]]],
        user_calls: set[str],
        row: dict[str, Any],
    ) -> None:
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise RecordProblem(WRONG_TYPE, f"messages[{i}].tool_calls")
        content = message.get("content")
        call_step = new_step(len(steps), "model", model)
        usage = message.get("usage")
        if isinstance(usage, dict):
            counts = [usage.get(k) for k in ("prompt_tokens", "completion_tokens")]
            known = [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
            call_step["tokens"] = sum(known) if known else None
        call_step["started_at"] = to_utc(message.get("timestamp"))
        response = {
            "content": content,
            "tool_calls": [c for c in calls if isinstance(c, dict)] or None,
            "finish_reason": _finish_reason(message) or ("tool_calls" if calls else "stop"),
        }
        call_step["response"] = orjson.dumps(response).decode()
        steps.append(call_step)
        if not calls and isinstance(content, str) and content:
            row["outcome"]["answer_text"] = content
        for j, call in enumerate(calls):
            where = f"messages[{i}].tool_calls[{j}]"
            if not isinstance(call, dict):
                raise RecordProblem(WRONG_TYPE, where)
            if call.get("requestor", "assistant") != "assistant":
                if call.get("id") is not None:
                    user_calls.add(str(call["id"]))
                continue
            name = call.get("name")
            if not isinstance(name, str) or not name:
                raise RecordProblem(MISSING_FIELD, f"{where}.name")
            step = new_step(len(steps), "tool", name)
            step["parent_seq"] = call_step["seq"]
            step["started_at"] = call_step["started_at"]
            arguments = call.get("arguments")
            if arguments is not None and not isinstance(arguments, dict):
                raise RecordProblem(WRONG_TYPE, f"{where}.arguments")
            set_arguments(step, arguments if arguments is not None else {}, keep_malformed=False)
            steps.append(step)
            pending.setdefault(str(call.get("id")), []).append(step)


def _finish_reason(message: dict[str, Any]) -> str | None:
    """The provider's own finish reason, when tau2 kept its raw response (``raw_data``)."""
    raw = message.get("raw_data")
    choices = raw.get("choices") if isinstance(raw, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        reason = choices[0].get("finish_reason")
        return reason if isinstance(reason, str) else None
    return None


def _reply(step: dict[str, Any], message: dict[str, Any], i: int) -> None:
    content = message.get("content")
    error = message.get("error", False)
    if not isinstance(error, bool):
        raise RecordProblem(WRONG_TYPE, f"messages[{i}].error")
    if error:
        step["status"] = "error"
        step["error"] = content if isinstance(content, str) and content else "error"
    step["response"] = json_text(content)
    started = step["started_at"]
    answered = to_utc(message.get("timestamp"))
    if started is not None and answered is not None and answered >= started:
        step["latency_ms"] = int((answered - started).total_seconds() * 1000)


def _chat_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """The conversation in OpenAI chat shape (what ``ReplayInput.messages`` holds)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": _opt_str(message.get("id")),
                 "content": message.get("content") or ""}
            )  # fmt: skip
            continue
        entry: dict[str, Any] = {"role": role, "content": message.get("content")}
        calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        if calls:
            entry["tool_calls"] = [
                {
                    "id": _opt_str(c.get("id")),
                    "type": "function",
                    "function": {
                        "name": c.get("name"),
                        "arguments": orjson.dumps(c.get("arguments") or {}).decode(),
                    },
                }
                for c in calls
            ]
        out.append(entry)
    return out
