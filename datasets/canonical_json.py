"""Canonical JSON for tool arguments: the key that replay jobs look recorded responses up by.

Two recordings of "the same call" must hash the same even when the recorder ordered keys
differently or stamped a fresh request id. So: keys sorted recursively, no insignificant
whitespace, and *volatile* keys (request ids, timestamps, idempotency keys...) removed at any
depth before hashing. Ingest and the replay reader both call ``canonical_args_sha256`` so the
two sides can never drift apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

#: Keys dropped before hashing (matched case-insensitively, at any depth). Configurable per run.
DEFAULT_VOLATILE_KEYS: frozenset[str] = frozenset(
    {
        "requestid",
        "request_id",
        "traceid",
        "trace_id",
        "spanid",
        "span_id",
        "idempotencykey",
        "idempotency_key",
        "timestamp",
        "timestampms",
        "ts",
        "nonce",
        "uuid",
        "correlationid",
        "correlation_id",
        "sentat",
        "sent_at",
    }
)


def _strip(value: Any, volatile: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {
            str(k): _strip(v, volatile) for k, v in value.items() if str(k).lower() not in volatile
        }
    if isinstance(value, list):
        return [_strip(v, volatile) for v in value]
    return value


def normalise_volatile_keys(keys: Iterable[str] | None) -> frozenset[str]:
    """The volatile key set to use: lower-cased, defaulting to ``DEFAULT_VOLATILE_KEYS``."""
    return DEFAULT_VOLATILE_KEYS if keys is None else frozenset(k.lower() for k in keys)


def canonical_json(value: Any, volatile_keys: Iterable[str] | None = None) -> bytes:
    """Compact JSON with keys sorted recursively and volatile keys removed."""
    return canonical_json_normalised(value, normalise_volatile_keys(volatile_keys))


def canonical_json_normalised(value: Any, volatile: frozenset[str]) -> bytes:
    """``canonical_json`` with the volatile key set already normalised (hot loops)."""
    stripped = _strip(value, volatile)
    return orjson.dumps(stripped, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def canonical_args_sha256(arguments: Any, volatile_keys: Iterable[str] | None = None) -> str:
    """sha256 hex of ``canonical_json(arguments)``.

    ``arguments`` may be a parsed value or JSON text; text that does not parse as JSON is hashed
    as a JSON string, so a malformed recording still gets a stable key.
    """
    if isinstance(arguments, str | bytes):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            arguments = arguments.decode() if isinstance(arguments, bytes) else arguments
    return hashlib.sha256(canonical_json(arguments, volatile_keys)).hexdigest()
