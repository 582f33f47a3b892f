"""Decoded native recordings -> canonical cases, a whole batch at a time, column by column.

This is the hot loop of ingest: a nightly batch is millions of lines. msgspec has already parsed
each line into the typed structs of ``native_shape`` (types, integer ranges and step vocabularies
checked in C; JSON-valued fields kept as their recorded bytes), so what is left is the mapping of
the contract in docs/architecture.md (camelCase recording -> snake_case canonical fields), the
checks msgspec cannot do, and the canonical argument hash. Each canonical column is extracted for
the whole batch at once (``attrgetter`` over the structs runs in C) and handed to
``case_batch.build_batch`` as a column, so no per-case tuple or dict is ever built.

A batch holding a recording that cannot become a case raises ``RecordError`` (a quarantine
reason and a detail naming the field path, never its value); the reader then finds the culprit
by building halves. ``record_error`` does the same for msgspec's own validation errors.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from itertools import accumulate, chain, pairwise
from typing import Any

import msgspec
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from golden_distill.datasets.canonical_json import canonical_args_sha256, normalise_volatile_keys
from golden_distill.datasets.quarantine import MISSING_FIELD, WRONG_TYPE
from golden_distill.datasets.schema import CASE_SCHEMA, STEP_KINDS, STEP_STATUSES, make_case_id
from golden_distill.datasets.sources.case_batch import build_batch, list_of_structs
from golden_distill.datasets.sources.native_shape import Context, Handoff, Intent, Recording
from golden_distill.datasets.sources.tool_catalogue import SystemsByName

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
#: Argument texts whose hash is remembered, and the longest remembered (a few MB at most).
_HASH_MEMO_SIZE = 1 << 15
_HASH_MEMO_TEXT_BYTES = 1024
_NO_INTENT, _NO_CONTEXT, _NO_HANDOFF = Intent(), Context(), Handoff()
_CONTAINERS = frozenset({dict, list})
_NULL = msgspec.Raw(b"null")
_STEP_TYPE = CASE_SCHEMA.field("steps").type
_CHUNK_TYPE = CASE_SCHEMA.field("context").type.field("retrieved_chunks").type
_EXPECTED_ACTIONS_TYPE = CASE_SCHEMA.field("expected").type.field("actions").type

_loads = orjson.loads
_dumps = orjson.dumps
_sha256 = hashlib.sha256
_SORT = orjson.OPT_SORT_KEYS
_WRITE_ERRORS = (orjson.JSONDecodeError, orjson.JSONEncodeError)

#: msgspec's validation messages: "<what> - at `$.path`" (the path is absent at the root).
_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")
_EXPECTED = re.compile(
    r"^Expected `(?P<type>[^`]+)`(?:, got `(?P<got>[^`]+)`)?(?P<bound> [<>]=? -?\d+)?$"
)
_VOCABULARY = {"kind": "|".join(STEP_KINDS), "status": "|".join(STEP_STATUSES)}


class RecordError(Exception):
    """A recording that cannot become a case: a quarantine reason and a detail naming the field."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def _wrong(path: str, expected: str) -> RecordError:
    return RecordError(WRONG_TYPE, f"{path}: expected {expected}")


def record_error(exc: msgspec.ValidationError) -> RecordError:
    """The quarantine reason for a msgspec validation error, with a detail naming the path.

    "Object missing required field" and a ``null`` where a required field's value belongs are
    ``missing_field``; every other mismatch is ``wrong_type``. The detail is rebuilt from the
    type names and bounds msgspec reports (which come from the shape): msgspec's own message is
    never passed on, as some of its messages quote the offending value.
    """
    match = _AT.match(str(exc))
    what = match["what"] if match else ""
    path = (match["path"] or "").lstrip(".") if match else ""
    where = path or "record"
    if missing := _MISSING.match(what):
        return RecordError(
            MISSING_FIELD, f"{path}.{missing['field']}" if path else missing["field"]
        )
    if what.startswith("Invalid enum value"):
        allowed = _VOCABULARY.get(path.rpartition(".")[2], "an allowed value")
        return _wrong(where, f"one of {allowed}")
    expected = _EXPECTED.match(what)
    if expected is None:
        return RecordError(WRONG_TYPE, f"{where}: does not fit the recording shape")
    got = expected["got"]
    if got == "null" and path and not path.endswith("]"):
        return RecordError(MISSING_FIELD, path)
    detail = f"{where}: expected {expected['type']}{expected['bound'] or ''}"
    return RecordError(WRONG_TYPE, detail + (f", got {got}" if got else ""))


def _utc_ms(text: str) -> int:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise _wrong("recordedAt", "an ISO-8601 timestamp") from None
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


def _expected(states: list[str | None]) -> list[Any]:
    """The four ``expected`` columns: native recordings carry ``expectedFinalState`` only."""
    n = len(states)
    has = [s is not None for s in states]
    return [
        states,
        list_of_structs([0] * (n + 1), [[], []], _EXPECTED_ACTIONS_TYPE),
        [[] if h else None for h in has],
        ["native" if h else None for h in has],
    ]


def _null_empty_expected(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``expected`` is null (not a struct of nulls) where the recording expects nothing."""
    index = batch.schema.get_field_index("expected")
    column = batch.column(index)
    source = column.field("source")
    if source.null_count == 0:
        return batch
    fields = list(column.type)
    children = [column.field(i) for i in range(len(fields))]
    nulled = pa.StructArray.from_arrays(children, fields=fields, mask=pc.is_null(source))
    return batch.set_column(index, batch.schema.field(index), nulled)


def _json_column(raws: list[msgspec.Raw]) -> pa.Array:
    """A string column of recorded JSON texts; absent (``b""``) and ``null`` are SQL null.

    Built straight from the ``Raw`` buffers: one join copies every text into the column's data
    buffer (no bytes object per value, no per-value UTF-8 check: the texts are slices, at JSON
    token boundaries, of lines the reader has checked to be UTF-8). A null slot keeps its
    ``null`` bytes under a cleared validity bit, which Arrow allows and every reader ignores.
    """
    n = len(raws)
    offsets = pa.array([*accumulate(map(len, raws), initial=0)], pa.int32())
    valid = pc.and_(
        pc.not_equal(pc.subtract(offsets[1:], offsets[:-1]), 0),
        pc.invert(pa.array([*map(_NULL.__eq__, raws)], pa.bool_(), size=n)),
    )
    data = pa.py_buffer(b"".join(raws))
    return pa.StringArray.from_buffers(n, offsets.buffers()[1], data, valid.buffers()[1])


def _has_volatile(value: Any, volatile: frozenset[str]) -> bool:
    """Whether ``_strip`` would remove anything from ``value`` (a dict or a list)."""
    if type(value) is dict:
        if not volatile.isdisjoint(map(str.lower, value)):
            return True
        value = value.values()
    for item in value:
        kind = type(item)
        if (kind is dict or kind is list) and _has_volatile(item, volatile):
            return True
    return False


def _error_texts(raws: list[msgspec.Raw]) -> list[str | bytes | None]:
    """Step errors: a recorded string as itself, any other JSON value as its JSON text."""
    try:
        return [None if not raw or raw == _NULL else _error_value(raw) for raw in raws]
    except orjson.JSONDecodeError:  # e.g. a lone surrogate escape
        for i, raw in enumerate(raws):  # find it, for the detail (batches of one)
            try:
                _error_value(raw)
            except orjson.JSONDecodeError:
                raise _wrong(f"toolCalls[{i}].error", "a string or a JSON value") from None
        raise


def _error_value(raw: msgspec.Raw) -> str | bytes:
    text = bytes(raw)
    return _loads(text) if text[:1] == b'"' else text


def _present(values: list[Any], empty: Any) -> list[Any]:
    """``values`` with each absent (``None``) sub-object replaced by an all-defaults one."""
    return [empty if v is None else v for v in values] if None in values else values


def _occurrences(names: list[str], offsets: list[int]) -> list[int]:
    """The nth call of its tool name within its run (1-based), for every call of the batch."""
    out: list[int] = []
    for start, end in pairwise(offsets):
        run = names[start:end]
        if len(set(run)) == len(run):  # every name once: the common case
            out.extend([1] * len(run))
            continue
        seen: dict[str, int] = {}
        for name in run:
            seen[name] = n = seen.get(name, 0) + 1
            out.append(n)
    return out


class NativeConverter:
    """Builds canonical case batches from the decoded native recordings of one source file."""

    def __init__(self, uri: str, volatile_keys: Iterable[str] | None = None) -> None:
        self.uri = uri
        self.volatile = normalise_volatile_keys(volatile_keys)
        # Recordings repeat the same arguments (the same lookup, the same search) often: hashes
        # of recently seen argument texts are kept, bounded, per file.
        self._hashes: dict[bytes, str] = {}
        self._systems = SystemsByName()

    def args_hash(self, value: Any) -> str:
        """``canonical_args_sha256(value, volatile)``, computed the fast way.

        Same bytes hashed as ``canonical_json`` (tests hold the two equal). Most arguments hold
        no volatile key: looking for one is cheaper than rebuilding the value without them, so
        the value is only rebuilt when one is found. Strings (possibly JSON text) take the
        shared path.
        """
        if type(value) is not dict and type(value) is not list:
            return canonical_args_sha256(value, self.volatile)
        if _has_volatile(value, self.volatile):
            value = _strip(value, self.volatile)
        return _sha256(_dumps(value, option=_SORT)).hexdigest()

    def text_args_hash(self, text: bytes) -> str:
        """``args_hash`` of the arguments recorded as JSON ``text``."""
        return self.args_hashes([text])[0]  # type: ignore[return-value]

    def args_hashes(self, texts: Iterable[bytes | msgspec.Raw]) -> list[str | None]:
        """``args_hash`` of each recorded arguments text (absent or ``null``: ``None``).

        The hot path: memoised per text, and a flat object without volatile keys (most
        arguments) is told apart by C-level set checks, without a Python call per value.
        """
        memo, volatile = self._hashes, self.volatile
        digests: list[str | None] = []
        append = digests.append
        for raw in texts:
            text = bytes(raw)
            if not text or text == b"null":
                append(None)
                continue
            digest = memo.get(text)
            if digest is None:
                try:
                    value = _loads(text)
                    if (
                        type(value) is dict
                        and volatile.isdisjoint(map(str.lower, value))
                        and _CONTAINERS.isdisjoint(map(type, value.values()))
                    ):
                        digest = _sha256(_dumps(value, option=_SORT)).hexdigest()
                    else:
                        digest = self.args_hash(value)
                except _WRITE_ERRORS:  # deeper than orjson reads/writes, or out of its range
                    path = f"toolCalls[{len(digests)}].arguments"  # exact in a batch of one
                    raise _wrong(path, "a JSON value that can be canonicalised") from None
                if len(text) <= _HASH_MEMO_TEXT_BYTES:
                    if len(memo) >= _HASH_MEMO_SIZE:
                        memo.clear()
                    memo[text] = digest
            append(digest)
        return digests

    def build(self, records: Sequence[Recording], line_nos: Sequence[int]) -> pa.RecordBatch:
        """The canonical batch for ``records`` (read from lines ``line_nos``).

        Raises ``RecordError`` (a detail naming the field when the batch holds one record) or an
        Arrow/type error when a value does not fit its column.
        """
        n = len(records)
        record_ids = [r.record_id for r in records]
        intents = _present([r.intent for r in records], _NO_INTENT)
        contexts = _present([r.context for r in records], _NO_CONTEXT)
        handoffs = _present([r.handoff for r in records], _NO_HANDOFF)
        turn_index = [r.turn_index for r in records]
        if None in turn_index:
            turn_index = [0 if t is None else t for t in turn_index]
        columns: list[Any] = [
            [make_case_id("native", rid) for rid in record_ids],
            [r.trace_id or r.record_id for r in records],
            [r.session_id for r in records],
            turn_index,
            [r.tenant_id for r in records],
            [r.user_id for r in records],
            [_utc_ms(r.recorded_at) for r in records],
            # agent
            [r.agent_version for r in records],
            [r.model_identifier for r in records],
            _json_column([r.model_params for r in records]),
            [r.system_prompt_version for r in records],
            _json_column([r.prompt_variables for r in records]),
            [r.initial_user_input for r in records],
            # intent
            [i.name for i in intents],
            [i.confidence for i in intents],
            # context
            *self._context(contexts),
            self._steps([r.tool_calls for r in records]),
            # outcome
            [r.final_output_text for r in records],
            [r.expected_final_state for r in records],
            [r.final_status for r in records],
            [h.requested for h in handoffs],
            [h.reason for h in handoffs],
            [r.low_confidence for r in records],
            [r.reward for r in records],
            # source
            ["native"] * n,
            [self.uri] * n,
            line_nos,
            record_ids,
            *_expected([r.expected_final_state for r in records]),
        ]
        return _null_empty_expected(build_batch(columns, n))

    @staticmethod
    def _context(contexts: list[Context]) -> list[Any]:
        """The five context columns (messages, memory, chunks, env versions, baseline)."""
        runs = [() if c.retrieved_chunks is None else c.retrieved_chunks for c in contexts]
        chunks = [*chain.from_iterable(runs)]
        chunk_columns = [
            [c.text for c in chunks],
            [c.index_snapshot_id for c in chunks],
            [c.query for c in chunks],
        ]
        return [
            _json_column([c.messages for c in contexts]),
            _json_column([c.memory for c in contexts]),
            list_of_structs([*accumulate(map(len, runs), initial=0)], chunk_columns, _CHUNK_TYPE),
            _json_column([c.env_versions for c in contexts]),
            _json_column([c.baseline_state for c in contexts]),
        ]

    def _steps(self, runs: list[list[Any]]) -> pa.Array:
        calls = [*chain.from_iterable(runs)]
        offsets = [*accumulate(map(len, runs), initial=0)]
        names = [c.tool_name for c in calls]
        seq = [c.step_index for c in calls]
        if None in seq:  # default: the call's position in its run
            positions = chain.from_iterable(map(range, map(len, runs)))
            seq = [p if s is None else s for s, p in zip(seq, positions, strict=True)]
        kinds = [c.kind for c in calls]
        if None in kinds or "" in kinds:
            kinds = [k or "tool" for k in kinds]
        statuses = [c.status for c in calls]
        if None in statuses or "" in statuses:
            statuses = [s or "ok" for s in statuses]
        arguments = [c.arguments for c in calls]
        systems = [c.system for c in calls]
        if None in systems:
            by_name = self._systems
            systems = [by_name[n] if s is None else s for s, n in zip(systems, names, strict=True)]
        columns = [
            seq,
            [c.parent_step for c in calls],
            kinds,
            names,
            _occurrences(names, offsets),
            _json_column(arguments),
            self.args_hashes(arguments),
            _json_column([c.response for c in calls]),
            statuses,
            _error_texts([c.error for c in calls]),
            [c.is_mutating for c in calls],
            systems,
            [c.latency_ms for c in calls],
            [c.tokens for c in calls],
            [c.timestamp_ms for c in calls],
        ]
        return list_of_structs(offsets, columns, _STEP_TYPE)
