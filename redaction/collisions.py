"""Pseudonyms never collide within a run: no two originals share one, none equals an original.

``key_pseudonym`` is a keyed permutation per key type and shape, so two different originals of
one type never get the same base pseudonym. What a permutation cannot promise in a small space
(``tenant-NNN``: 1000 values) is that a pseudonym is not *another original*, which would make
``tenant-117`` in a published set read as the real tenant 117. The guard sees every original
key of a table before anything is replaced, and widens (appends digits to, then permutes) the
pseudonym of any original whose pseudonym is another original, deterministically: originals
are taken in sorted order and each widening is checked against every original and every
pseudonym already assigned.

Across the run (other shards' tables) the guard also checks the run's key digests
(``key_digests.RunKeys``, from the flow's key pass): a pseudonym that is an original of another
table is widened too, to a widening that is neither an original nor a base pseudonym anywhere in
the run, so every table takes the same decision for the same original.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from golden_distill.redaction.key_digests import (
    PublishedDigests,
    RunKeys,
    digest_array,
    key_digest,
)
from golden_distill.redaction.key_rules import KeyRule
from golden_distill.redaction.pseudonym import key_pseudonym


class CollisionGuard:
    """How far to widen each original key's pseudonym (0 for almost all)."""

    def __init__(
        self, secret: bytes, keys: Iterable[tuple[str, KeyRule]], run: RunKeys | None = None
    ) -> None:
        by_type: dict[KeyRule, set[str]] = {}
        for value, rule in keys:
            by_type.setdefault(rule, set()).add(value)
        run = run or RunKeys()
        self._widen: dict[tuple[str, str], int] = {}
        self.widened = 0
        #: originals of this table the run's digests do not hold (0 when the key pass saw
        #: every chosen case; the flow reports it)
        self.uncovered = 0
        plain: list[int] = []
        widened: list[int] = []
        widened_bases: list[int] = []
        skipped: list[int] = []
        for rule, values in by_type.items():
            kt = rule.key_type
            ordered = sorted(values)
            base_of = {v: key_pseudonym(v, kt, secret, rule.prefix) for v in ordered}
            used = set(base_of.values())
            base_digests = np.fromiter(
                (key_digest(secret, kt, base_of[v]) for v in ordered), dtype=np.uint64
            )
            base_is_original = run.are_originals(base_digests)
            if len(run.originals):
                mine = np.fromiter((key_digest(secret, kt, v) for v in ordered), dtype=np.uint64)
                self.uncovered += int((~run.are_originals(mine)).sum())
            for value, digest, taken in zip(ordered, base_digests, base_is_original, strict=True):
                if base_of[value] not in values and not taken:
                    plain.append(int(digest))
                    continue
                widened_bases.append(int(digest))
                k = 1
                while True:
                    wide = key_pseudonym(value, kt, secret, rule.prefix, k)
                    wide_digest = key_digest(secret, kt, wide)
                    if wide not in values and wide not in used and not run.is_taken(wide_digest):
                        break
                    skipped.append(wide_digest)
                    k += 1
                used.add(wide)
                widened.append(wide_digest)
                self._widen[(kt, value)] = k
                self.widened += 1
        self.published = PublishedDigests(
            plain=digest_array(plain),
            widened=digest_array(widened),
            widened_bases=digest_array(widened_bases),
            skipped=digest_array(skipped),
            run_fingerprint=run.fingerprint if len(run.originals) else "",
        )

    def widen(self, value: str, key_type: str) -> int:
        return self._widen.get((key_type, value), 0)
