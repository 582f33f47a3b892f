"""Pseudonyms never collide within a table: no two originals share one, none equals an original.

``key_pseudonym`` is a keyed permutation per key type and shape, so two different originals of
one type never get the same base pseudonym. What a permutation cannot promise in a small space
(``tenant-NNN``: 1000 values) is that a pseudonym is not *another original* of the batch, which
would make ``tenant-117`` in a published set read as the real tenant 117. The guard sees every
original key of a table before anything is replaced, and widens (appends digits to, then
permutes) the pseudonym of any original whose pseudonym is another original, deterministically:
originals are taken in sorted order and each widening is checked against every original and
every pseudonym already assigned.
"""

from __future__ import annotations

from collections.abc import Iterable

from golden_distill.redaction.key_rules import KeyRule
from golden_distill.redaction.pseudonym import key_pseudonym


class CollisionGuard:
    """How far to widen each original key's pseudonym (0 for almost all)."""

    def __init__(self, secret: bytes, keys: Iterable[tuple[str, KeyRule]]) -> None:
        by_type: dict[KeyRule, set[str]] = {}
        for value, rule in keys:
            by_type.setdefault(rule, set()).add(value)
        self._widen: dict[tuple[str, str], int] = {}
        self.widened = 0
        for rule, originals in by_type.items():
            used = {key_pseudonym(v, rule.key_type, secret, rule.prefix) for v in originals}
            for value in sorted(originals):
                base = key_pseudonym(value, rule.key_type, secret, rule.prefix)
                if base not in originals:
                    continue
                k = 1
                while True:
                    wide = key_pseudonym(value, rule.key_type, secret, rule.prefix, k)
                    if wide not in originals and wide not in used:
                        break
                    k += 1
                used.add(wide)
                self._widen[(rule.key_type, value)] = k
                self.widened += 1

    def widen(self, value: str, key_type: str) -> int:
        return self._widen.get((key_type, value), 0)
