"""Small helpers the chat, evidence and OTel adapters share to build canonical case rows.

Rows are plain dicts in ``CASE_SCHEMA`` shape (what ``ShardWriter`` takes), built directly rather
than through the ``Case`` dataclasses because adapters make one per recorded run and ``asdict``
deep-copies. Every adapter finishes its steps the same way (occurrence, canonical argument hash,
catalogue facts, hand-off kind) so the funnels see one meaning whatever the source.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable
from datetime import UTC, datetime
from typing import Any

import orjson

from golden_distill.datasets.canonical_json import (
    DEFAULT_VOLATILE_KEYS,
    canonical_args_sha256,
    canonical_json,
    normalise_volatile_keys,
)
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.tool_catalogue import ToolCatalogue, load_tool_catalogue

#: Quarantine reason: a tool call whose arguments are a string that is not JSON.
MALFORMED_ARGUMENTS = "malformed_arguments"
#: Quarantine reason: the input is not in the layout the adapter reads (e.g. no `traj` list).
UNRECOGNISED_LAYOUT = "unrecognised_layout"


def json_text(value: Any) -> str | None:
    """JSON text for a recorded value: strings that already are JSON stay byte-exact.

    A string that does not parse as JSON (a plain-text tool reply) is stored as a JSON string so
    every ``arguments``/``response`` field is valid JSON text.
    """
    if value is None:
        return None
    if isinstance(value, str):
        try:
            orjson.loads(value)
        except orjson.JSONDecodeError:
            return orjson.dumps(value).decode()
        return value
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


#: Private step key: the parsed arguments, so the hash needs no second parse (popped by finish).
_ARGS_VALUE = "_args_value"


def python_literal(text: str) -> Any:
    """``text`` read as a Python literal (``{'thought': 'x'}``, as some agents log tool
    arguments) with ``ast.literal_eval``, which only builds literals and never runs code; the
    value when it is JSON-shaped (dict, list, str, number, bool, None), else ``_NOT_JSON``."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_JSON
    try:
        orjson.dumps(value)
    except TypeError:  # a set, tuple of bytes, complex...: not JSON
        return _NOT_JSON
    return value


_NOT_JSON = object()


def set_arguments(
    step: dict[str, Any], value: Any, *, keep_malformed: bool, python_literals: bool = False
) -> str:
    """Store recorded tool arguments in ``step`` as JSON text; ``ok``, ``literal``, ``kept`` or
    ``malformed``.

    JSON text stays byte-exact and an object is dumped compactly. Text that is not JSON is read
    as a Python literal when ``python_literals`` (stored as JSON, ``literal``); otherwise it is
    ``malformed`` (the caller quarantines the run) unless ``keep_malformed``, when it is stored
    as a JSON string (``kept``).
    """
    if value is None:
        return "ok"
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            literal = python_literal(value) if python_literals else _NOT_JSON
            if literal is not _NOT_JSON:
                step["arguments"] = orjson.dumps(literal).decode()
                step[_ARGS_VALUE] = literal
                return "literal"
            if not keep_malformed:
                return "malformed"
            step["arguments"] = orjson.dumps(value).decode()
            return "kept"
        step["arguments"] = value
        step[_ARGS_VALUE] = parsed
        return "ok"
    step["arguments"] = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    step[_ARGS_VALUE] = value
    return "ok"


def to_utc(value: Any) -> datetime | None:
    """A UTC datetime from a datetime, ISO-8601 text or epoch milliseconds; None if unusable."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace(" ", "T", 1)
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return None


def new_case_row(
    case_id: str, fmt: str, uri: str, position: int | None, source_record_id: str | None
) -> dict[str, Any]:
    """A case row with every CASE_SCHEMA field present and empty."""
    return {
        "case_id": case_id,
        "trace_id": None,
        "session_id": None,
        "turn_index": None,
        "tenant_id": None,
        "user_id": None,
        "recorded_at": None,
        "agent": {
            "agent_version": None,
            "model_name": None,
            "model_params": None,
            "system_prompt_version": None,
            "prompt_variables": None,
        },
        "user_input": None,
        "intent": {"name": None, "confidence": None},
        "context": {
            "messages": None,
            "memory": None,
            "retrieved_chunks": [],
            "env_versions": None,
            "baseline_state": None,
        },
        "steps": [],
        "outcome": {
            "answer_text": None,
            "final_state": None,
            "status": None,
            "handoff": None,
            "handoff_reason": None,
            "low_confidence": None,
            "reward": None,
        },
        "source": {
            "format": fmt,
            "uri": uri,
            "position": position,
            "source_record_id": source_record_id,
        },
        "expected": None,
    }


def expected_row(
    source: str,
    final_state: str | None = None,
    actions: Iterable[tuple[str, Any]] = (),
    answer_facts: Iterable[str] = (),
    *,
    keep_empty: bool = False,
) -> dict[str, Any] | None:
    """The ``expected`` struct (``schema.EXPECTED_TYPE``), or ``None`` when nothing is expected.

    Action arguments become canonical JSON text (the same canonicalisation as the step hashes),
    so an expected action can be compared with a replayed call by text or by hash.
    ``keep_empty``: an empty expectation still counts (a tau-bench task listing no actions
    expects no writes).
    """
    action_rows = [
        {"name": str(name), "arguments": canonical_json(args).decode()} for name, args in actions
    ]
    facts = [str(f) for f in answer_facts if f is not None and str(f) != ""]
    if final_state is None and not action_rows and not facts and not keep_empty:
        return None
    return {
        "final_state": final_state,
        "actions": action_rows,
        "answer_facts": facts,
        "source": source,
    }


def new_step(seq: int, kind: str, name: str) -> dict[str, Any]:
    """A step row with every STEP_TYPE field present; occurrence is set by ``finish_steps``."""
    return {
        "seq": seq,
        "parent_seq": None,
        "kind": kind,
        "name": name,
        "occurrence": 0,
        "arguments": None,
        "canonical_args_sha256": None,
        "response": None,
        "status": "ok",
        "error": None,
        "is_mutating": None,
        "system": None,
        "latency_ms": None,
        "tokens": None,
        "started_at": None,
    }


class StepFinisher:
    """Fills the derived step fields every adapter computes the same way."""

    def __init__(
        self,
        catalogue: ToolCatalogue,
        handoff_tools: Collection[str],
        volatile_keys: Iterable[str] | None,
    ) -> None:
        self.catalogue = catalogue
        self.handoff_tools = frozenset(handoff_tools)
        volatile = normalise_volatile_keys(volatile_keys)
        # None means "the defaults" to canonical_args_sha256, which then skips re-normalising
        # the key set on every call (a measurable share of ingest time).
        self.volatile = None if volatile == DEFAULT_VOLATILE_KEYS else volatile

    @classmethod
    def from_config(cls, config: IngestConfig) -> StepFinisher:
        """The finisher an adapter uses: the config's catalogues, hand-off tools, volatile keys."""
        return cls(
            load_tool_catalogue(config.tool_catalogues), config.handoff_tools, config.volatile_keys
        )

    def is_handoff(self, name: str) -> bool:
        return name in self.handoff_tools

    def finish(self, row: dict[str, Any], *, recorded: Collection[str] = ()) -> None:
        """Occurrence, argument hash, catalogue facts and hand-off kind for ``row["steps"]``.

        ``recorded`` names the fields the source recorded itself (``is_mutating``, ``system``,
        ``kind``, ``handoff``): those stay as read, NULL included (a recorded "unknown" is not
        overwritten by a guess); the others come from the catalogue and the hand-off list.
        """
        seen: dict[str, int] = {}
        handoff = False
        for step in row["steps"]:
            name = step["name"]
            seen[name] = seen.get(name, 0) + 1
            step["occurrence"] = seen[name]
            parsed = step.pop(_ARGS_VALUE, None)
            if step["arguments"] is not None:
                # a parsed object/array hashes the same as its text; scalars go by the text
                # (canonical_args_sha256 would re-parse a parsed string)
                source = parsed if isinstance(parsed, dict | list) else step["arguments"]
                step["canonical_args_sha256"] = canonical_args_sha256(source, self.volatile)
            if step["kind"] in ("tool", "handoff"):
                info = self.catalogue.lookup(name)
                if "is_mutating" not in recorded:
                    step["is_mutating"] = info.is_mutating
                if "system" not in recorded:
                    step["system"] = info.system
                if "kind" not in recorded and step["kind"] == "tool" and name in self.handoff_tools:
                    step["kind"] = "handoff"
            handoff = handoff or step["kind"] == "handoff"
        if handoff and "handoff" not in recorded:
            row["outcome"]["handoff"] = True


class RecordProblem(Exception):
    """One record cannot become a case: a quarantine reason code and a detail naming where.

    The detail names fields and positions only (``traj[7].tool_call_id``), never record text.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
