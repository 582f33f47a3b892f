"""The typed shape of one native recording, decoded by msgspec straight from the JSONL bytes.

Why typed structs instead of ``orjson.loads`` + dict lookups: msgspec checks every field's type
while it parses (in C) and builds only the objects the case needs. JSON-valued fields (model
params, prompt variables, messages, memory, env versions, baseline state, step arguments,
responses, object errors) are ``msgspec.Raw``: the exact recorded bytes, never parsed into
Python objects and never re-serialised, which is both the fast path and what the canonical
schema asks for (JSON text "exactly as recorded").

A ``Raw`` field that is absent is an empty ``Raw`` (``b""``, the shared ``ABSENT``); one recorded
as ``null`` holds ``b"null"``; both become SQL null. What msgspec does not check (ISO timestamps,
empty record ids, arguments that cannot be canonicalised) is checked by
``native_record.NativeConverter``. Integer ranges are declared here, so a bad value fails
with a JSON path (``$.toolCalls[2].stepIndex``) that ``native_record.record_error`` turns into a
quarantine reason.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

_INT32_MAX = 2**31 - 1
#: A non-negative int32 (turn index, step index, parent step).
Index = Annotated[int, msgspec.Meta(ge=0, le=_INT32_MAX)]
#: ``schema.STEP_KINDS`` / ``STEP_STATUSES``; an empty string (like null) means the default.
StepKind = Literal["model", "tool", "route", "handoff", ""]
StepStatus = Literal["ok", "error", "timeout", ""]
#: The value of a ``Raw`` field the recording does not have (compare with ``is``).
ABSENT = msgspec.Raw()


class _Shape(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """Common options: camelCase JSON keys; no cycles, so the cyclic GC need not track them."""


class ToolCall(_Shape):
    tool_name: str
    step_index: Index | None = None
    parent_step: Index | None = None
    kind: StepKind | None = None
    arguments: msgspec.Raw = ABSENT
    response: msgspec.Raw = ABSENT
    status: StepStatus | None = None
    error: msgspec.Raw = ABSENT  # a string, or any JSON value (kept as its JSON text)
    is_mutating: bool | None = None
    system: str | None = None
    latency_ms: int | None = None
    tokens: int | None = None
    timestamp_ms: int | None = None


class Chunk(_Shape):
    text: str | None = None
    index_snapshot_id: str | None = None
    query: str | None = None


class Context(_Shape):
    messages: msgspec.Raw = ABSENT
    memory: msgspec.Raw = ABSENT
    retrieved_chunks: list[Chunk] | None = None
    env_versions: msgspec.Raw = ABSENT
    baseline_state: msgspec.Raw = ABSENT


class Intent(_Shape):
    name: str | None = None
    confidence: float | None = None


class Handoff(_Shape):
    requested: bool | None = None
    reason: str | None = None


class Recording(_Shape):
    record_id: str
    session_id: str
    recorded_at: str
    initial_user_input: str
    tool_calls: list[ToolCall]
    trace_id: str | None = None
    turn_index: Index | None = None
    tenant_id: str | None = None
    user_id: str | None = None
    agent_version: str | None = None
    model_identifier: str | None = None
    model_params: msgspec.Raw = ABSENT
    system_prompt_version: str | None = None
    prompt_variables: msgspec.Raw = ABSENT
    intent: Intent | None = None
    context: Context | None = None
    final_output_text: str | None = None
    expected_final_state: str | None = None
    final_status: str | None = None
    handoff: Handoff | None = None
    low_confidence: bool | None = None
    reward: float | None = None


#: One decoder for all lines (decoders are reusable and thread-safe).
DECODER = msgspec.json.Decoder(Recording)
