"""Run-wide pseudonym collision check on keyed digests: no raw key leaves a redaction task.

Each redaction task (one shard's chosen cases) widens a pseudonym that equals another original
*of its own table* (``collisions.CollisionGuard``). Across the run, a pseudonym of shard A may
still equal an original that only shard B holds. Each task therefore reports, per key type,
keyed digests (HMAC-SHA256 under the pseudonym key, 16 bytes) of its originals, of their base
pseudonyms and of the pseudonyms it published. The flow intersects them (``tasks_to_redo``):
a task whose published pseudonym is another task's original (or, when widened, another task's
base pseudonym) is redone with the run's digests (``RunKeys``) so its guard widens exactly as
if it had seen every original of the run.

Why one redo is enough: a task's decisions depend only on the run's originals and base
pseudonyms, which a redo does not change. Why the same original gets the same pseudonym in
every shard: under the run's digests every task takes the same decision for it (widen iff its
base pseudonym is an original of the run; the smallest widening that is neither an original
nor a base pseudonym of the run), and a first-pass decision that differs fails the check.

Light on purpose (no Presidio import): the flow process uses it.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field

DIGEST_BYTES = 16


def key_digest(secret: bytes, key_type: str, value: str) -> bytes:
    """Keyed digest of one key value (an original or a pseudonym) of ``key_type``."""
    msg = f"key-collision\x1f{key_type}\x1f{value}".encode()
    return hmac.new(secret, msg, hashlib.sha256).digest()[:DIGEST_BYTES]


@dataclass(frozen=True)
class KeyDigests:
    """What one redaction task tells the run about its keys, per key type (digests only)."""

    originals: dict[str, frozenset[bytes]] = field(default_factory=dict)
    bases: dict[str, frozenset[bytes]] = field(default_factory=dict)  # base pseudonyms
    published: dict[str, frozenset[bytes]] = field(default_factory=dict)  # after widening


@dataclass(frozen=True)
class RunKeys:
    """The run's digests a redone task checks its pseudonyms against, per key type."""

    originals: dict[str, frozenset[bytes]] = field(default_factory=dict)
    bases: dict[str, frozenset[bytes]] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """A short stable digest of the whole content (for cache keys and folder names)."""
        h = hashlib.sha256()
        for name, part in (("o", self.originals), ("b", self.bases)):
            for key_type in sorted(part):
                h.update(f"\x1e{name}\x1f{key_type}\x1f".encode())
                for d in sorted(part[key_type]):
                    h.update(d)
        return h.hexdigest()


def _union(parts: list[dict[str, frozenset[bytes]]]) -> dict[str, frozenset[bytes]]:
    out: dict[str, set[bytes]] = {}
    for part in parts:
        for key_type, digests in part.items():
            out.setdefault(key_type, set()).update(digests)
    return {k: frozenset(v) for k, v in out.items()}


def run_keys(reports: list[KeyDigests]) -> RunKeys:
    return RunKeys(
        originals=_union([r.originals for r in reports]),
        bases=_union([r.bases for r in reports]),
    )


def collides(report: KeyDigests, run: RunKeys) -> bool:
    """Whether a pseudonym the task published is an original of the run (or, widened, a base
    pseudonym of the run): its first pass did not see every original."""
    for key_type, published in report.published.items():
        originals = run.originals.get(key_type, frozenset())
        bases = report.bases.get(key_type, frozenset())
        plain = published & bases
        widened = published - bases
        if plain & originals:
            return True
        if widened and widened & (originals | run.bases.get(key_type, frozenset())):
            return True
    return False


def tasks_to_redo(reports: Mapping[int, KeyDigests | None]) -> tuple[RunKeys, list[int]]:
    """The run's digests and the tasks (by index) whose pseudonyms collide across the run."""
    run = run_keys([r for r in reports.values() if r is not None])
    redo = [i for i, r in sorted(reports.items()) if r is not None and collides(r, run)]
    return run, redo
