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

``RunCoveredGuard`` takes the same decisions one batch at a time (the flow's redaction task
then holds one batch, not the whole table): when the run's digests hold every original of the
table and its base pseudonym, the eager checks against the table (``base in values``, ``wide
in values``, ``wide in used`` for bases) are implied by the run's (``are_originals``,
``is_taken``), so each original's decision needs only the run's digests and the widenings
already assigned. Those are assigned in batch order, not in sorted order; the one way that
could differ from the eager guard is two widened originals of one rule whose widening chains
meet (``t-12`` with two digits and ``t-120`` with one both give ``t-1200``'s permutation), the
later one in sorted order asked first. The guard notices exactly that case (a chain passes a
widening owned by an original that sorts after it) and gives up, as it does for an original
the run's digests do not hold: the table is then redone with the eager guard. Every decision a
table publishes is therefore the eager one (proof in ``RunCoveredGuard``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from golden_distill.redaction.key_digests import (
    DIGEST_BYTES,
    PublishedDigests,
    RunKeys,
    contains,
    digest_array,
    key_digest,
    key_digest_wide,
)
from golden_distill.redaction.key_rules import KeyRule
from golden_distill.redaction.known_bases import KnownBases
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
        self._base: dict[tuple[str, str], tuple[str | None, str]] = {}
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
            self._base.update(((kt, v), (rule.prefix, base)) for v, base in base_of.items())
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

    def base(self, value: str, key_type: str, prefix: str | None) -> str | None:
        """The base pseudonym the guard decided ``value`` on (``key_pseudonym`` of it), when it
        saw ``value`` under a rule with this ``prefix``; None if not (the caller computes)."""
        found = self._base.get((key_type, value))
        return found[1] if found is not None and found[0] == prefix else None


class NotCovered(Exception):
    """The batch-by-batch guard cannot promise the eager guard's decisions for this table."""


class RunCoveredGuard(CollisionGuard):
    """The eager guard's decisions, taken batch by batch against the run's key digests.

    ``add(keys)`` decides a batch's new originals before the batch is redacted; it raises
    ``NotCovered`` when the table must be redone with ``CollisionGuard`` (an original or its
    base pseudonym missing from the run's digests, one original under two rules of a key type,
    or two widening chains met in an order the eager guard would not take).

    Why the decisions are the eager ones when it never raised. Per rule, with every original
    ``v`` of the table in ``run.originals`` and ``base(v)`` in ``run.bases``: (1) eager widens
    ``v`` iff ``base(v)`` is in the table's originals or the run's, i.e. iff it is in the
    run's (what this guard asks); (2) eager passes a widening ``w`` iff ``w`` is an original of
    the table, a base of the table, taken in the run, or the widening of an original sorting
    before ``v``: the first three are ``run.is_taken(w)`` (what this guard asks), the fourth is
    ``O_eager(v)``, where this guard asks ``O_here(v)``, the widenings of originals decided
    before ``v``. Take the first ``u`` in sorted order whose widening here differs from eager's.
    Widenings here are pairwise distinct (each passes those already assigned), so here's cannot
    come earlier in ``u``'s chain than eager's: it would be ``eager(t) = here(t)`` for a
    ``t < u``. So eager's came earlier and was passed here: it is in ``O_here(u)`` and not in
    ``O_eager(u) = {here(t): t < u}``, so it is the widening of some ``t > u`` decided before
    ``u``: exactly what ``add`` raises on. Hence no raise means every widening (and every
    passed-over widening, the chain before it) equals eager's, and the published digests are
    the same sets (``digest_array`` sorts them).
    """

    def __init__(self, secret: bytes, run: RunKeys, known: KnownBases | None = None) -> None:
        """``known``: the base pseudonyms the key pass computed for this table (looked up
        instead of computed again; a key it lacks is computed)."""
        # not CollisionGuard.__init__: nothing is known before the first batch
        self._secret = secret
        self._run = run
        self._known = known or KnownBases()
        self._widen = {}
        self._base = {}
        self.widened = 0
        self.uncovered = 0  # an uncovered original raises NotCovered instead
        self._rule_of: dict[tuple[str, str], KeyRule] = {}
        self._owner: dict[KeyRule, dict[str, str]] = {}  # widening -> its original
        self._plain: list[int] = []
        self._widened: list[int] = []
        self._widened_bases: list[int] = []
        self._skipped: list[int] = []

    def add(self, keys: Iterable[tuple[str, KeyRule]]) -> None:
        """Decide every original of ``keys`` not decided yet (a batch's, before it is
        redacted); raises ``NotCovered`` when the table must fall back to the eager guard."""
        by_type: dict[KeyRule, set[str]] = {}
        for value, rule in keys:
            seen = self._rule_of.get((rule.key_type, value))
            if seen is None:  # new: decided below
                self._rule_of[(rule.key_type, value)] = rule
                by_type.setdefault(rule, set()).add(value)
            elif seen != rule:  # the eager guard would decide it once per rule
                raise NotCovered("an original under two rules of one key type")
        run, secret = self._run, self._secret
        batch = []
        for rule, values in by_type.items():  # first check all, so nothing half-decided stays
            kt, prefix = rule.key_type, rule.prefix
            ordered = sorted(values)
            known = self._known.for_rule(kt, prefix)
            mine_wide = [key_digest_wide(secret, kt, v) for v in ordered]
            base_of: list[tuple[str, int]] = []
            for value, wide in zip(ordered, mine_wide, strict=True):
                hit = known.get(wide)
                if hit is None:
                    base = key_pseudonym(value, kt, secret, prefix)
                    hit = (base, key_digest(secret, kt, base))
                base_of.append(hit)
            bases = np.fromiter((digest for _, digest in base_of), dtype=np.uint64)
            mine = np.fromiter(
                (int.from_bytes(w[:DIGEST_BYTES], "big") for w in mine_wide), dtype=np.uint64
            )
            if not (run.are_originals(mine).all() and contains(run.bases, bases).all()):
                raise NotCovered("an original the run's key digests do not hold")
            batch.append((rule, ordered, bases, base_of))
        for rule, ordered, bases, base_of in batch:
            self._base.update(
                ((rule.key_type, v), (rule.prefix, b))
                for v, (b, _) in zip(ordered, base_of, strict=True)
            )
            self._decide(rule, ordered, bases)

    def _decide(self, rule: KeyRule, ordered: list[str], bases: np.ndarray) -> None:
        run, secret, kt = self._run, self._secret, rule.key_type
        owner = self._owner.setdefault(rule, {})
        for value, digest, taken in zip(ordered, bases, run.are_originals(bases), strict=True):
            if not taken:
                self._plain.append(int(digest))
                continue
            self._widened_bases.append(int(digest))
            k = 1
            while True:
                wide = key_pseudonym(value, kt, secret, rule.prefix, k)
                wide_digest = key_digest(secret, kt, wide)
                held_by = owner.get(wide)
                if held_by is not None and held_by > value:
                    raise NotCovered("widening chains met out of sorted order")
                if held_by is None and not run.is_taken(wide_digest):
                    break
                self._skipped.append(wide_digest)
                k += 1
            owner[wide] = value
            self._widened.append(wide_digest)
            self._widen[(kt, value)] = k
            self.widened += 1

    @property
    def published(self) -> PublishedDigests:  # type: ignore[override]
        """The decisions taken so far (the whole table's once every batch was added)."""
        return PublishedDigests(
            plain=digest_array(self._plain),
            widened=digest_array(self._widened),
            widened_bases=digest_array(self._widened_bases),
            skipped=digest_array(self._skipped),
            run_fingerprint=self._run.fingerprint,
        )
