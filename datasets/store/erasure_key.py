"""The erasure key: what lets an erased subject stay erased across pseudonym-key rotations.

Why a key of its own: the erasure log cannot hold raw values (it would be personal data), and
what redaction makes of a value (a pseudonym, a placeholder) changes with the pseudonym key; so
after a rotation, needles logged under the old key no longer match the cases a run publishes.
The log therefore also records each erased value as ``HMAC(erasure key, value)`` (a *raw
digest*), and every run checks the raw text of the cases it is about to publish against those
digests before redaction (``erasure_log.erased_raw_case_ids``): a match is refused like a case
redaction refuses (the next member of its cluster takes its place). The erasure key is never
rotated with the pseudonym key; without it nobody can test a guessed value against the log.

``GOLDEN_ERASURE_KEY`` holds it (at least 32 bytes). Its id (a hash, like the pseudonym key's)
is logged beside the digests, so a run with another erasure key fails closed instead of
silently matching nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field

ERASURE_KEY_ENV = "GOLDEN_ERASURE_KEY"
MIN_ERASURE_KEY_BYTES = 32


class ErasureKeyError(RuntimeError):
    """The erasure key is missing, too short, or not the one the log was written with."""


@dataclass(frozen=True, slots=True)
class ErasureKey:
    secret: bytes = field(repr=False)

    @property
    def key_id(self) -> str:
        return (
            "e_"
            + hashlib.sha256(b"golden-distill erasure key id\x00" + self.secret).hexdigest()[:16]
        )

    def digest(self, value: str) -> str:
        """The raw digest of a value, case-folded and with whitespace runs as one space (so
        ``Mia.Li@X.com`` and ``mia.li@x.com`` are one subject)."""
        text = " ".join(value.split()).casefold()
        return hmac.new(
            self.secret, f"golden-erasure-raw\x1f{text}".encode(), hashlib.sha256
        ).hexdigest()


def erasure_key_from_env(env: dict[str, str] | None = None) -> ErasureKey | None:
    """The configured erasure key, or None when ``GOLDEN_ERASURE_KEY`` is unset."""
    value = (env if env is not None else os.environ).get(ERASURE_KEY_ENV)
    if not value:
        return None
    secret = value.encode()
    if len(secret) < MIN_ERASURE_KEY_BYTES:
        raise ErasureKeyError(
            f"{ERASURE_KEY_ENV} is {len(secret)} bytes; at least {MIN_ERASURE_KEY_BYTES} are "
            "required"
        )
    return ErasureKey(secret)
