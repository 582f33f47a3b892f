"""What redaction made of an erasure subject: the strings `golden erase` searches a set for.

A published set never holds a subject's raw value, only its keyed pseudonym (key fields such as
``user_id``) or its ``<ENTITY_hex8>`` placeholder (personal values such as ``email``). Erasure
finds the subject's cases by deriving those *needles* with the same rules, code and key as
redaction did; so this lives in redaction, and the store's erasure (``datasets/store/erasure.py``)
takes the needles as plain strings.
"""

from __future__ import annotations

from collections.abc import Iterable

from golden_distill.datasets.store.erasure import ErasureError, Subject
from golden_distill.redaction.key_rules import KeyRule, PiiRule, RuleMatcher
from golden_distill.redaction.pseudonym import key_pseudonym, value_token

#: How many widened forms of a key pseudonym redaction may have used (redaction/collisions.py
#: widens a pseudonym that would equal another original of its table).
WIDENINGS = 3


def subject_needles(subject: Subject, secret: bytes, matcher: RuleMatcher) -> set[str]:
    """What redaction with this key made of the subject's value: its pseudonym or placeholder."""
    rule = matcher.match((subject.field,))
    if isinstance(rule, KeyRule):
        # the widened forms are searched too
        return {
            key_pseudonym(subject.value, rule.key_type, secret, rule.prefix, widen)
            for widen in range(WIDENINGS)
        }
    if isinstance(rule, PiiRule):
        return {value_token(subject.value, rule.entity_type, secret)}
    if subject.field.isupper():  # an entity type named directly (PERSON, PHONE_NUMBER...)
        return {value_token(subject.value, subject.field, secret)}
    raise ErasureError(
        f"subject field {subject.field!r}: no redaction key field or key rule says what it is; "
        "use a configured field (user_id, email...) or an entity type (PERSON=...)"
    )


def needles_of(subjects: Iterable[Subject], secret: bytes, matcher: RuleMatcher) -> set[str]:
    """Every subject's needles, in one set."""
    return set().union(*(subject_needles(s, secret, matcher) for s in subjects))
