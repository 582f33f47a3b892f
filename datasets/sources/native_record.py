"""One native recording (a parsed JSONL line) -> one canonical case, as a flat tuple.

This is the hot loop of ingest: a nightly batch is millions of lines, so the conversion is plain
code over dicts (no pydantic, no dataclasses) and produces a tuple in ``CASE_SCHEMA`` field order
(structs flattened, lists of structs as lists of tuples) that ``case_batch.build_case_batch``
turns into Arrow columns in bulk. The field mapping is the contract in docs/architecture.md:
camelCase recording keys -> snake_case canonical fields.

Types are checked as values are read, so a recording whose ``turnIndex`` is a string or whose
``toolCalls`` is not a list is rejected with a ``RecordError`` naming the field path (never its
value) instead of failing a whole Arrow batch later.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from golden_distill.datasets.canonical_json import canonical_args_sha256, normalise_volatile_keys
from golden_distill.datasets.quarantine import MISSING_FIELD, WRONG_TYPE
from golden_distill.datasets.schema import STEP_KINDS, STEP_STATUSES, make_case_id
from golden_distill.datasets.sources.tool_catalogue import PREFIX_SYSTEMS

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_INT32_MAX = 2**31 - 1
_KINDS = frozenset(STEP_KINDS)
_STATUSES = frozenset(STEP_STATUSES)
#: "erp" -> "ERP": tool-name prefix (before the first "_") to system.
_SYSTEM_BY_PREFIX = {prefix.rstrip("_"): system for prefix, system in PREFIX_SYSTEMS.items()}
_REQUIRED_STR = ("recordId", "sessionId", "recordedAt", "initialUserInput")

_dumps = orjson.dumps
_sha256 = hashlib.sha256
_SORT = orjson.OPT_SORT_KEYS


class RecordError(Exception):
    """A recording that cannot become a case: a quarantine reason and a detail naming the field."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def _wrong(path: str, expected: str) -> RecordError:
    return RecordError(WRONG_TYPE, f"{path}: expected {expected}")


def _opt_str(record: dict[str, Any], key: str, path: str) -> str | None:
    value = record.get(key)
    if value is None or type(value) is str:
        return value
    raise _wrong(path, "a string")


def _opt_bool(record: dict[str, Any], key: str, path: str) -> bool | None:
    value = record.get(key)
    if value is None or type(value) is bool:
        return value
    raise _wrong(path, "true or false")


def _opt_number(record: dict[str, Any], key: str, path: str) -> float | None:
    value = record.get(key)
    if value is None:
        return None
    kind = type(value)
    if kind is float or kind is int:
        return float(value)
    raise _wrong(path, "a number")


def _opt_object(record: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = record.get(key)
    if value is None:
        return {}
    if type(value) is dict:
        return value
    raise _wrong(path, "an object")


def _json_text(value: Any, path: str) -> bytes | None:
    """Compact JSON text of any recorded value (``None`` stays SQL null)."""
    if value is None:
        return None
    try:
        return _dumps(value)
    except orjson.JSONEncodeError:  # nesting deeper than orjson writes, or a 65-bit integer
        raise _wrong(path, "a JSON value that can be written back") from None


def _utc_ms(text: str, path: str) -> int:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise _wrong(path, "an ISO-8601 timestamp") from None
    if parsed.tzinfo is None:  # recorders write UTC; a bare timestamp is taken as UTC
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _MS


def _strip(value: Any, volatile: frozenset[str]) -> Any:
    """``value`` without volatile keys at any depth (keys of parsed JSON are always strings)."""
    if type(value) is dict:
        return {k: _strip(v, volatile) for k, v in value.items() if k.lower() not in volatile}
    if type(value) is list:
        return [_strip(v, volatile) for v in value]
    return value


class NativeConverter:
    """Converts parsed native recordings of one source file into canonical case tuples."""

    def __init__(self, uri: str, volatile_keys: Iterable[str] | None = None) -> None:
        self.uri = uri
        self.volatile = normalise_volatile_keys(volatile_keys)
        # A volatile key can only be present if its quoted name followed by ":" is in the text;
        # when it is not, sorting the keys is all canonicalisation has to do (fast path).
        names = b"|".join(re.escape(k.encode()) for k in sorted(self.volatile))
        self._maybe_volatile = re.compile(b'"(?:' + names + b')":').search if names else None

    def args_hash(self, value: Any, text: bytes) -> str:
        """``canonical_args_sha256(value, volatile)``, computed the fast way.

        Same bytes hashed as ``canonical_json`` (tests hold the two equal); the strip is skipped
        when no volatile key can be present. Strings (possibly JSON text) take the shared path.
        """
        if type(value) is not dict and type(value) is not list:
            return canonical_args_sha256(value, self.volatile)
        if self._maybe_volatile is not None and self._maybe_volatile(text.lower()) is not None:
            value = _strip(value, self.volatile)
        return _sha256(_dumps(value, option=_SORT)).hexdigest()

    def convert(self, record: dict[str, Any], line_no: int) -> tuple[Any, ...]:
        """The case tuple for ``record`` (read from line ``line_no``); raises ``RecordError``."""
        get = record.get
        for key in _REQUIRED_STR:
            value = get(key)
            if type(value) is not str:
                if value is None:
                    raise RecordError(MISSING_FIELD, key)
                raise _wrong(key, "a string")
        calls = get("toolCalls")
        if type(calls) is not list:
            if calls is None:
                raise RecordError(MISSING_FIELD, "toolCalls")
            raise _wrong("toolCalls", "a list")
        record_id: str = record["recordId"]
        if not record_id:
            raise RecordError(MISSING_FIELD, "recordId (empty)")

        turn_index = get("turnIndex", 0)
        if type(turn_index) is not int or not 0 <= turn_index <= _INT32_MAX:
            if turn_index is None:
                turn_index = 0
            else:
                raise _wrong("turnIndex", "a non-negative integer")
        trace_id = _opt_str(record, "traceId", "traceId") or record_id

        intent = _opt_object(record, "intent", "intent")
        context = _opt_object(record, "context", "context")
        handoff = _opt_object(record, "handoff", "handoff")
        return (
            make_case_id("native", record_id),
            trace_id,
            record["sessionId"],
            turn_index,
            _opt_str(record, "tenantId", "tenantId"),
            _opt_str(record, "userId", "userId"),
            _utc_ms(record["recordedAt"], "recordedAt"),
            # agent
            _opt_str(record, "agentVersion", "agentVersion"),
            _opt_str(record, "modelIdentifier", "modelIdentifier"),
            _json_text(get("modelParams"), "modelParams"),
            _opt_str(record, "systemPromptVersion", "systemPromptVersion"),
            _json_text(get("promptVariables"), "promptVariables"),
            record["initialUserInput"],
            # intent
            _opt_str(intent, "name", "intent.name"),
            _opt_number(intent, "confidence", "intent.confidence"),
            # context
            _json_text(context.get("messages"), "context.messages"),
            _json_text(context.get("memory"), "context.memory"),
            self._chunks(context.get("retrievedChunks")),
            _json_text(context.get("envVersions"), "context.envVersions"),
            _json_text(context.get("baselineState"), "context.baselineState"),
            self._steps(calls),
            # outcome
            _opt_str(record, "finalOutputText", "finalOutputText"),
            _opt_str(record, "expectedFinalState", "expectedFinalState"),
            _opt_str(record, "finalStatus", "finalStatus"),
            _opt_bool(handoff, "requested", "handoff.requested"),
            _opt_str(handoff, "reason", "handoff.reason"),
            _opt_bool(record, "lowConfidence", "lowConfidence"),
            _opt_number(record, "reward", "reward"),
            # source
            "native",
            self.uri,
            line_no,
            record_id,
        )

    @staticmethod
    def _chunks(chunks: Any) -> list[tuple[Any, ...]]:
        if chunks is None:
            return []
        if type(chunks) is not list:
            raise _wrong("context.retrievedChunks", "a list")
        out = []
        for i, chunk in enumerate(chunks):
            path = f"context.retrievedChunks[{i}]"
            if type(chunk) is not dict:
                raise _wrong(path, "an object")
            out.append(
                (
                    _opt_str(chunk, "text", path + ".text"),
                    _opt_str(chunk, "indexSnapshotId", path + ".indexSnapshotId"),
                    _opt_str(chunk, "query", path + ".query"),
                )
            )
        return out

    def _steps(self, calls: list[Any]) -> list[tuple[Any, ...]]:
        steps = []
        seen: dict[str, int] = {}
        args_hash = self.args_hash
        for i, call in enumerate(calls):
            if type(call) is not dict:
                raise _wrong(f"toolCalls[{i}]", "an object")
            get = call.get
            name = get("toolName")
            if type(name) is not str:
                if name is None:
                    raise RecordError(MISSING_FIELD, f"toolCalls[{i}].toolName")
                raise _wrong(f"toolCalls[{i}].toolName", "a string")
            seq = get("stepIndex", i)
            if type(seq) is not int or not 0 <= seq <= _INT32_MAX:
                if seq is not None:
                    raise _wrong(f"toolCalls[{i}].stepIndex", "a non-negative integer")
                seq = i
            parent = get("parentStep")
            if parent is not None and (type(parent) is not int or not 0 <= parent <= _INT32_MAX):
                raise _wrong(f"toolCalls[{i}].parentStep", "a non-negative integer or null")
            kind = get("kind") or "tool"
            if type(kind) is not str or kind not in _KINDS:
                raise _wrong(f"toolCalls[{i}].kind", "one of " + "|".join(STEP_KINDS))
            status = get("status") or "ok"
            if type(status) is not str or status not in _STATUSES:
                raise _wrong(f"toolCalls[{i}].status", "one of " + "|".join(STEP_STATUSES))
            occurrence = seen.get(name, 0) + 1
            seen[name] = occurrence

            arguments = get("arguments")
            if arguments is None:
                args_text = args_sha = None
            else:
                args_text = _json_text(arguments, f"toolCalls[{i}].arguments")
                args_sha = args_hash(arguments, args_text)
            response = get("response")
            response_text = None if response is None else _dumps_at(response, i, "response")
            error = get("error")
            if error is not None and type(error) is not str:
                error = _dumps_at(error, i, "error")
            mutating = get("isMutating")
            if mutating is not None and type(mutating) is not bool:
                raise _wrong(f"toolCalls[{i}].isMutating", "true or false")
            system = get("system")
            if system is None:
                system = _SYSTEM_BY_PREFIX.get(name.partition("_")[0].lower())
            elif type(system) is not str:
                raise _wrong(f"toolCalls[{i}].system", "a string")
            latency, tokens, started = get("latencyMs"), get("tokens"), get("timestampMs")
            if latency is not None and type(latency) is not int:
                raise _wrong(f"toolCalls[{i}].latencyMs", "an integer")
            if tokens is not None and type(tokens) is not int:
                raise _wrong(f"toolCalls[{i}].tokens", "an integer")
            if started is not None and type(started) is not int:
                raise _wrong(f"toolCalls[{i}].timestampMs", "integer epoch milliseconds")
            steps.append(
                (
                    seq,
                    parent,
                    kind,
                    name,
                    occurrence,
                    args_text,
                    args_sha,
                    response_text,
                    status,
                    error,
                    mutating,
                    system,
                    latency,
                    tokens,
                    started,
                )
            )
        return steps


def _dumps_at(value: Any, index: int, key: str) -> bytes | None:
    try:
        return _dumps(value)
    except orjson.JSONEncodeError:
        raise _wrong(f"toolCalls[{index}].{key}", "a JSON value that can be written back") from None
