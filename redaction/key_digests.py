"""Run-wide pseudonym collision check on keyed digests: no raw key leaves a task.

A redaction task widens a pseudonym that equals another original (``collisions.
CollisionGuard``), but a pseudonym of shard A may equal an original only shard B holds. So
before any case is redacted, a key pass (``key_scan.KeyScanner``, no Presidio) reports the
keyed digests of every original key of the chosen cases and of its base pseudonym; the flow
merges them into one ``RunKeys`` (two sorted ``uint64`` arrays, ~16 bytes per distinct key:
~25 MB for a million-session night) that every redaction task loads, so each guard widens as if
it had seen every original of the run, in the first and only pass.

Why every task takes the same decision for an original: the decision (widen iff the base
pseudonym is an original of the run; the smallest widening that is neither an original nor a
base pseudonym of the run) depends only on the value and on ``RunKeys``. Cases chosen later (a
refused case's replacement) add originals: a task that ran with an older ``RunKeys`` reports
its decisions (``PublishedDigests``) and is redone only if it would now decide differently
(``needs_redo``): rare, because replacements are few. The same check lets a rerun reuse a
cached redaction whose shard did not change even when another shard's keys did.

Digests are HMAC-SHA256 under the pseudonym key truncated to 8 bytes: a false match (about one
in 2^64 per pair) only widens a pseudonym that did not need it, identically in every task.
Light on purpose (no Presidio import): the flow process uses it.
"""

from __future__ import annotations

import hashlib
import hmac
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

DIGEST_BYTES = 8
WIDE_DIGEST_BYTES = 16
_EMPTY = np.zeros(0, dtype=np.uint64)


def key_digest(secret: bytes, key_type: str, value: str) -> int:
    """Keyed digest of one key value (an original or a pseudonym) of ``key_type``."""
    return int.from_bytes(key_digest_wide(secret, key_type, value)[:DIGEST_BYTES], "big")


def key_digest_wide(secret: bytes, key_type: str, value: str) -> bytes:
    """The first 16 bytes of the HMAC ``key_digest`` takes its 8 from: what identifies an
    original where a false match must not happen (``known_bases.py``)."""
    msg = f"key-collision\x1f{key_type}\x1f{value}".encode()
    return hmac.new(secret, msg, hashlib.sha256).digest()[:WIDE_DIGEST_BYTES]


def digest_array(digests: Iterable[int]) -> np.ndarray:
    """Sorted distinct digests (what ``np.searchsorted`` lookups need)."""
    return sorted_distinct(np.fromiter(digests, dtype=np.uint64))


def sorted_distinct(digests: np.ndarray) -> np.ndarray:
    """``np.unique`` by sorting. numpy 2.3+ finds distinct values with a hash table first,
    which on a run's digests (all distinct, random) is ~80x slower than a sort: 1.3 s
    against 0.016 s for 1.4M digests."""
    ordered = np.sort(digests)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def contains(sorted_digests: np.ndarray, digests: np.ndarray) -> np.ndarray:
    """Per digest: whether it is in ``sorted_digests`` (vectorised binary search)."""
    if not len(sorted_digests) or not len(digests):
        return np.zeros(len(digests), dtype=bool)
    at = np.searchsorted(sorted_digests, digests)
    at[at == len(sorted_digests)] = 0
    return sorted_digests[at] == digests


@dataclass(frozen=True, eq=False)
class KeyDigests:
    """What the key pass tells the run about one shard's chosen cases (digests only)."""

    originals: np.ndarray  # sorted distinct digests of original keys
    bases: np.ndarray  # sorted distinct digests of their base (unwidened) pseudonyms

    @property
    def keys(self) -> int:
        return len(self.originals)


@dataclass(frozen=True, eq=False)
class RunKeys:
    """Every original key of the run's chosen cases and its base pseudonym, as digests."""

    originals: np.ndarray = field(default_factory=lambda: _EMPTY)
    bases: np.ndarray = field(default_factory=lambda: _EMPTY)

    @classmethod
    def merge(cls, parts: Iterable[KeyDigests | RunKeys]) -> RunKeys:
        parts = list(parts)
        return cls(
            originals=sorted_distinct(np.concatenate([_EMPTY, *(p.originals for p in parts)])),
            bases=sorted_distinct(np.concatenate([_EMPTY, *(p.bases for p in parts)])),
        )

    def are_originals(self, digests: np.ndarray) -> np.ndarray:
        return contains(self.originals, digests)

    def is_taken(self, digest: int) -> bool:
        """An original or a base pseudonym of the run: a widening must be neither."""
        d = np.array([digest], dtype=np.uint64)
        return bool(contains(self.originals, d)[0] or contains(self.bases, d)[0])

    @cached_property
    def fingerprint(self) -> str:
        """A short stable digest of the whole content (cache keys, folder names)."""
        h = hashlib.sha256(b"run-keys-v2")
        for part in (self.originals, self.bases):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part.astype(">u8").tobytes())
        return h.hexdigest()

    def to_bytes(self) -> bytes:
        out = io.BytesIO()
        np.savez(out, originals=self.originals, bases=self.bases)
        return out.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> RunKeys:
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            return cls(
                originals=saved["originals"].astype(np.uint64, copy=False),
                bases=saved["bases"].astype(np.uint64, copy=False),
            )


@dataclass(frozen=True, eq=False)
class PublishedDigests:
    """The decisions one redaction task took, as digests: enough to tell, against another
    ``RunKeys`` (a later round's, or a rerun's when one shard changed), whether the task would
    decide the same (its cached output stands) or must be redone."""

    plain: np.ndarray  # base pseudonyms published as they are
    widened: np.ndarray  # widened pseudonyms published
    widened_bases: np.ndarray  # base pseudonyms it widened (an original of the run or table)
    skipped: np.ndarray  # widenings it passed over (taken in the run or table)
    run_fingerprint: str  # the ``RunKeys`` the task ran with ("" for none)


def needs_redo(published: PublishedDigests, run: RunKeys) -> bool:
    """Whether a task that ran with other key digests than ``run`` would decide differently
    under ``run``: a base pseudonym it kept is an original now, one it widened is not any
    more, a widening it chose is taken now, or one it passed over is free now."""
    if published.run_fingerprint == run.fingerprint:
        return False  # it ran with exactly these digests

    def taken(digests: np.ndarray) -> np.ndarray:
        return run.are_originals(digests) | contains(run.bases, digests)

    return bool(
        run.are_originals(published.plain).any()
        or not run.are_originals(published.widened_bases).all()
        or taken(published.widened).any()
        or not taken(published.skipped).all()
    )
