"""Keyed pseudonyms (HMAC-SHA256), exposed to Presidio as a custom anonymizer Operator.

Why not Presidio's ``hash`` operator: since 2.2.361 it salts randomly per entity unless given a
salt, and a salted SHA is not an HMAC; replay needs the *same* pseudonym for the same value in
every step, case, shard and nightly version, and only holders of the secret may compute it.

Two shapes:

* primary keys keep their format: a configured prefix (``#W``, ``ORD-``) stays, every other letter
  or digit is replaced by one of the same class (digit, lower, upper) and punctuation stays, so
  ``#W2378156`` becomes ``#W8301945`` and a validator for ``#W\\d{7}`` still accepts it. Keys are
  namespaced by key type, so an order and a user with the same text get unrelated pseudonyms.
  Format-keeping means a small space (10^7 for seven digits): two originals can share a
  pseudonym in large sets (birthday bound, ~n^2/2*10^7); give short keys a prefix-free shape or
  accept the bound (docs/privacy.md);
* other personal values become ``<ENTITY_TYPE_1a2b3c4d>`` (case-insensitive in the value), a token
  no recognizer fires on, stable so the same name reads the same in every place it was.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from functools import lru_cache
from typing import Any

from presidio_anonymizer.operators import Operator, OperatorType

from golden_distill.redaction.keys import MIN_KEY_BYTES

OPERATOR_NAME = "keyed_pseudonym"
_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()


def _stream(secret: bytes, message: bytes, length: int) -> bytes:
    """``length`` pseudo-random bytes: HMAC-SHA256 blocks over (counter, message)."""
    out = b""
    counter = 0
    while len(out) < length:
        out += hmac.new(secret, counter.to_bytes(4, "big") + message, hashlib.sha256).digest()
        counter += 1
    return out[:length]


@lru_cache(maxsize=1 << 16)
def key_pseudonym(value: str, key_type: str, secret: bytes, prefix: str | None = None) -> str:
    """Format-keeping pseudonym of a primary key value (deterministic in key, type and value)."""
    kept = ""
    if prefix:
        match = _compiled(prefix).match(value)
        if match:
            kept = match.group(0)
    rest = value[len(kept) :]
    stream = _stream(secret, f"key\x1f{key_type}\x1f{value}".encode(), max(len(rest), 1))
    out = []
    for i, ch in enumerate(rest):
        b = stream[i]
        if ch.isdigit():
            # keep a leading non-zero digit non-zero, so numeric ids stay valid numbers
            if i == 0 and ch != "0" and not kept:
                out.append(_DIGITS[1 + b % 9])
            else:
                out.append(_DIGITS[b % 10])
        elif ch.isupper():
            out.append(_UPPER[b % 26])
        elif ch.isalpha():
            out.append(_LOWER[b % 26])
        else:
            out.append(ch)
    return kept + "".join(out)


@lru_cache(maxsize=1 << 16)
def value_token(value: str, entity_type: str, secret: bytes) -> str:
    """``<ENTITY_hex8>``: a stable stand-in for a personal value (case-insensitive)."""
    digest = hmac.new(
        secret, f"pii\x1f{entity_type}\x1f{value.casefold()}".encode(), hashlib.sha256
    ).hexdigest()
    return f"<{entity_type}_{digest[:8]}>"


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class KeyedPseudonymOperator(Operator):
    """Presidio Operator ``keyed_pseudonym``: params ``secret`` (bytes), optional ``key_type``
    (then a format-keeping key pseudonym, with optional ``prefix``), else a value token for the
    ``entity_type`` Presidio passes in."""

    def operate(self, text: str, params: dict[str, Any] | None = None) -> str:
        params = params or {}
        secret = params["secret"]
        key_type = params.get("key_type")
        if key_type:
            return key_pseudonym(text, key_type, secret, params.get("prefix"))
        return value_token(text, params["entity_type"], secret)

    def validate(self, params: dict[str, Any] | None = None) -> None:
        secret = (params or {}).get("secret")
        if not isinstance(secret, bytes) or len(secret) < MIN_KEY_BYTES:
            raise ValueError(f"keyed_pseudonym needs a secret of >= {MIN_KEY_BYTES} bytes")

    def operator_name(self) -> str:
        return OPERATOR_NAME

    def operator_type(self) -> OperatorType:
        return OperatorType.Anonymize
