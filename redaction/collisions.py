"""Pseudonyms never collide within a run: no two originals share one, none equals an original.

``key_pseudonym`` is a keyed permutation per key type and shape, so two different originals of
one type never get the same base pseudonym. What a permutation cannot promise in a small space
(``tenant-NNN``: 1000 values) is that a pseudonym is not *another original*, which would make
``tenant-117`` in a published set read as the real tenant 117. The guard sees every original
key of a table before anything is replaced, and widens (appends digits to, then permutes) the
pseudonym of any original whose pseudonym is another original, deterministically: originals
are taken in sorted order and each widening is checked against every original and every
pseudonym already assigned.

Across the run (other shards' tables), the guard works on keyed digests (``key_digests.py``):
it reports the digests of its originals and pseudonyms, and a task redone with the run's
digests (``RunKeys``) also widens a pseudonym that is an original of another table, choosing a
widening that is neither an original nor a base pseudonym anywhere in the run.
"""

from __future__ import annotations

from collections.abc import Iterable

from golden_distill.redaction.key_digests import KeyDigests, RunKeys, key_digest
from golden_distill.redaction.key_rules import KeyRule
from golden_distill.redaction.pseudonym import key_pseudonym

_NONE: frozenset[bytes] = frozenset()


class CollisionGuard:
    """How far to widen each original key's pseudonym (0 for almost all)."""

    def __init__(
        self, secret: bytes, keys: Iterable[tuple[str, KeyRule]], run: RunKeys | None = None
    ) -> None:
        by_type: dict[KeyRule, set[str]] = {}
        for value, rule in keys:
            by_type.setdefault(rule, set()).add(value)
        self._widen: dict[tuple[str, str], int] = {}
        self.widened = 0
        originals: dict[str, set[bytes]] = {}
        bases: dict[str, set[bytes]] = {}
        published: dict[str, set[bytes]] = {}
        for rule, values in by_type.items():
            kt = rule.key_type
            run_originals = run.originals.get(kt, _NONE) if run else _NONE
            run_bases = run.bases.get(kt, _NONE) if run else _NONE
            base_of = {v: key_pseudonym(v, kt, secret, rule.prefix) for v in values}
            used = set(base_of.values())
            digest = {v: key_digest(secret, kt, v) for v in values}
            base_digest = {v: key_digest(secret, kt, p) for v, p in base_of.items()}
            originals.setdefault(kt, set()).update(digest.values())
            bases.setdefault(kt, set()).update(base_digest.values())
            out = published.setdefault(kt, set())
            for value in sorted(values):
                base = base_of[value]
                if base not in values and base_digest[value] not in run_originals:
                    out.add(base_digest[value])
                    continue
                k = 1
                while True:
                    wide = key_pseudonym(value, kt, secret, rule.prefix, k)
                    if wide not in values and wide not in used:
                        wide_digest = key_digest(secret, kt, wide)
                        if wide_digest not in run_originals and wide_digest not in run_bases:
                            break
                    k += 1
                used.add(wide)
                out.add(wide_digest)
                self._widen[(kt, value)] = k
                self.widened += 1
        self.digests = KeyDigests(
            originals={k: frozenset(v) for k, v in originals.items()},
            bases={k: frozenset(v) for k, v in bases.items()},
            published={k: frozenset(v) for k, v in published.items()},
        )

    def widen(self, value: str, key_type: str) -> int:
        return self._widen.get((key_type, value), 0)
