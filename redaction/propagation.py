"""Value propagation: a value known to be personal (or a key) in one place of a case is replaced
in every place of that case, inside longer strings too.

A name found in a CRM response is thus also scrubbed from the user's message and the final
answer, and an order id pseudonymised in the call arguments reads the same in the tool reply and
the agent's text. Matching: keys case-sensitively, personal values case-insensitively, longest
first, and never inside a longer word or number (ASCII letters and digits only, so matching
also works next to Chinese text). Phone, card and id values are also searched in their compact and
digits-only forms. Every substitute comes from the ``keyed_pseudonym`` operator as registered
with Presidio's ``AnonymizerEngine`` (one place decides what replaces what).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass, field

import ahocorasick
import phonenumbers
from presidio_anonymizer import AnonymizerEngine
from presidio_anonymizer.entities import OperatorConfig
from presidio_anonymizer.operators import OperatorType

from golden_distill.redaction.collisions import CollisionGuard
from golden_distill.redaction.key_rules import KeyRule
from golden_distill.redaction.pseudonym import OPERATOR_NAME, KeyedPseudonymOperator

#: Entity types whose values are also looked for without separators.
DIGIT_ENTITIES = frozenset(
    {
        "PHONE_NUMBER",
        "CN_MOBILE",
        "CREDIT_CARD",
        "BANK_CARD",
        "CN_RESIDENT_ID",
        "ID_CARD",
        "IBAN_CODE",
    }
)
_MIN_DIGIT_VARIANT = 7
_SEPARATORS = re.compile(r"[\s().\-/]")


def make_anonymizer() -> AnonymizerEngine:
    engine = AnonymizerEngine()
    engine.add_anonymizer(KeyedPseudonymOperator)
    return engine


_EMAIL_NAME = re.compile(r"([a-z]{2,})[._]([a-z]{2,})\d*@", re.IGNORECASE)


def names_in_email(email: str) -> list[str]:
    """ "mei.brown7922@..." names Mei Brown: agents greet people by what their address says."""
    m = _EMAIL_NAME.match(email)
    if not m:
        return []
    first, last = (part.capitalize() for part in m.groups())
    return [f"{first} {last}", first, last]


def variants(value: str, entity_type: str) -> list[str]:
    """Other spellings of a phone/card/id value that mean the same thing."""
    if entity_type not in DIGIT_ENTITIES:
        return []
    out = []
    compact = _SEPARATORS.sub("", value)
    digits = re.sub(r"\D", "", value)
    for v in (compact, digits):
        if v != value and len(re.sub(r"\D", "", v)) >= _MIN_DIGIT_VARIANT and v not in out:
            out.append(v)
    if entity_type == "PHONE_NUMBER" and value.lstrip().startswith("+"):
        try:
            national = str(phonenumbers.parse(value).national_number)
        except phonenumbers.NumberParseException:
            national = ""
        if len(national) >= _MIN_DIGIT_VARIANT and national not in out:
            out.append(national)
    return out


def _automaton(needles: list[str]) -> ahocorasick.Automaton | None:
    """An Aho-Corasick automaton over ``needles`` (one C pass per string, whatever their
    number); its values are the needle lengths."""
    if not needles:
        return None
    automaton = ahocorasick.Automaton()
    for needle in needles:
        automaton.add_word(needle, len(needle))
    automaton.make_automaton()
    return automaton


_WORD_CHARS = frozenset(string.ascii_letters + string.digits)


def _bounded(text: str, start: int, end: int) -> bool:
    """Not inside a longer ASCII word/number (works next to Chinese text, unlike ``\\b``)."""
    w = _WORD_CHARS
    if start > 0 and text[start] in w and text[start - 1] in w:
        return False
    return not (end < len(text) and text[end - 1] in w and text[end] in w)


@dataclass
class ValueIndex:
    """Collects one case's keys and personal values, then builds its ``Propagator``.

    Personal values match case-insensitively, except one-word names ("Will", "Grace" are
    also words): those match exactly. A multi-word name also contributes its words, so "Mei"
    alone is found once "Mei Brown" is known.
    """

    secret: bytes
    min_length: int = 3
    min_name_length: int = 2
    keys: dict[str, KeyRule] = field(default_factory=dict)
    pii: dict[str, str] = field(default_factory=dict)  # casefolded value -> entity type
    pii_spelling: dict[str, str] = field(default_factory=dict)  # casefold -> first spelling
    case_sensitive: set[str] = field(default_factory=set)  # casefolded one-word names
    no_propagate: set[str] = field(default_factory=set)  # casefolded values kept local
    #: casefolded values that may not seed the batch's name dictionary: found only through a
    #: generic evidence key (a ``name`` that may be a product's), not in a personal position
    not_shared: set[str] = field(default_factory=set)

    def add_key(self, value: str, rule: KeyRule) -> None:
        if value and value not in self.keys:
            self.keys[value] = rule

    def add_pii(
        self, value: str, entity_type: str, *, propagate: bool = True, share: bool = True
    ) -> None:
        """Index a personal value. ``share=False``: it is replaced everywhere in this case but
        never seeds the batch's name dictionary (its position did not say it is personal)."""
        value = value.strip()
        if not value or value in self.keys:
            return
        folded = value.casefold()
        if share:
            self.not_shared.discard(folded)
        elif folded not in self.pii:
            self.not_shared.add(folded)
        if folded not in self.pii:
            self.pii[folded] = entity_type
            self.pii_spelling[folded] = value
            if not propagate:
                self.no_propagate.add(folded)
            for v in variants(value, entity_type):
                self.add_pii(v, entity_type)
            if entity_type == "EMAIL_ADDRESS":
                for name in names_in_email(value):
                    self.add_pii(name, "PERSON")
            if entity_type == "PERSON":
                words = value.split()
                if len(words) == 1 and value[:1].isupper():
                    self.case_sensitive.add(folded)
                elif len(words) > 1 and propagate:
                    for word in words:
                        if word[:1].isupper() and len(word) >= self.min_name_length:
                            self.add_pii(word, entity_type)
        elif propagate:
            self.no_propagate.discard(folded)

    def min_length_of(self, entity_type: str) -> int:
        return self.min_name_length if entity_type == "PERSON" else self.min_length

    def build(
        self, anonymizer: AnonymizerEngine, guard: CollisionGuard | None = None
    ) -> Propagator:
        return Propagator(self, anonymizer, guard)


class Propagator:
    """Replaces every known value of one case in any string of that case."""

    def __init__(
        self, index: ValueIndex, anonymizer: AnonymizerEngine, guard: CollisionGuard | None = None
    ) -> None:
        self.guard = guard
        self.secret = index.secret
        self.anonymizer = anonymizer
        self.keys = index.keys
        self.pii = index.pii
        # needles: (text to find, case-insensitive?) longest first, so "Mei Brown" wins over
        # "Mei"; plain str.find per needle is far cheaper than compiling one regex per case
        needles: list[tuple[str, bool]] = []
        for value in self.keys:
            if len(value) >= index.min_length:
                needles.append((value, False))
        self.case_sensitive = index.case_sensitive
        self.pii_spelling = index.pii_spelling
        local: set[str] = set()
        for folded, spelling in index.pii_spelling.items():
            long_enough = len(spelling) >= index.min_length_of(index.pii[folded])
            if long_enough and folded not in index.no_propagate:
                ci = folded not in index.case_sensitive
                needles.append((spelling.lower() if ci else spelling, ci))
            else:
                local.add(spelling)
        needles.sort(key=lambda item: -len(item[0]))
        self.needles = needles
        self._automata = [
            _automaton([n for n, ci in needles if ci is flag]) for flag in (False, True)
        ]
        #: known values not searched for inside strings (too short, or ordinary words): they
        #: are replaced only as whole values where a rule owns them
        self.local_values: set[str] = {v for v in self.keys if len(v) < index.min_length} | local
        self.operators: dict[str, OperatorConfig] = {}
        for rule in set(self.keys.values()):
            self.operators[rule.label] = OperatorConfig(
                OPERATOR_NAME,
                {"secret": self.secret, "key_type": rule.key_type, "prefix": rule.prefix},
            )
        for entity in set(self.pii.values()):
            self.operators[entity] = OperatorConfig(OPERATOR_NAME, {"secret": self.secret})
        self.emitted: set[str] = set()  # every substitute written (verification ignores them)
        self._replaced: dict[str, tuple[str, list[str]]] = {}  # a case repeats its strings
        self._substitutes: dict[tuple[str, str], str] = {}
        # the operator as registered with Presidio's anonymizer (spans here never overlap, so
        # the engine's conflict resolution, quadratic in spans, is not needed per string)
        self.operator = anonymizer.operators_factory.create_operator_class(
            OPERATOR_NAME, OperatorType.Anonymize
        )
        self.operator.validate({"secret": self.secret})

    # -- whole values ------------------------------------------------------------------
    def label_of(self, text: str) -> str | None:
        rule = self.keys.get(text)
        if rule is not None:
            return rule.label
        folded = text.casefold()
        if folded in self.case_sensitive and self.pii_spelling[folded] != text:
            return None
        return self.pii.get(folded)

    def substitute(self, text: str) -> str:
        """The substitute for a whole known value (``text`` must be known)."""
        label = self.label_of(text)
        if label is None:
            label = self.pii[text.casefold()]
        return self._operate(text, label)

    # -- inside strings ------------------------------------------------------------------
    def _haystacks(self, text: str) -> tuple[str, str]:
        low = text.lower()
        if len(low) != len(text):  # lower() changed lengths (rare scripts): keep offsets aligned
            low = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
        return text, low

    def has_any(self, text: str) -> bool:
        """A cheap pre-check: could ``text`` hold a known value at all?"""
        for automaton, hay in zip(self._automata, self._haystacks(text), strict=True):
            if automaton is not None and next(automaton.iter(hay), None) is not None:
                return True
        return False

    def raw_hits(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every needle occurrence in ``text``, unchecked (no word bounds, no
        overlap rule): a superset of where ``find`` can match inside any part of ``text``, for
        ASCII text (whose lower-casing is per character)."""
        hits: list[tuple[int, int]] = []
        for automaton, hay in zip(self._automata, (text, text.lower()), strict=True):
            if automaton is not None:
                for last, length in automaton.iter(hay):
                    hits.append((last + 1 - length, last + 1))
        return hits

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, label) of known values in ``text``, longest first,
        never inside a longer ASCII word or number."""
        if not self.needles:
            return []
        hits: list[tuple[int, int]] = []
        for automaton, hay in zip(self._automata, self._haystacks(text), strict=True):
            if automaton is not None:
                for last, length in automaton.iter(hay):
                    hits.append((last + 1 - length, last + 1))
        if not hits:
            return []
        hits.sort(key=lambda h: (h[0] - h[1], h[0]))  # longest first, then leftmost
        spans: list[tuple[int, int, str]] = []
        for start, end in hits:
            if not _bounded(text, start, end) or any(s < end and start < e for s, e, _ in spans):
                continue
            label = self.label_of(text[start:end])
            if label is not None:
                spans.append((start, end, label))
        spans.sort()
        return spans

    def replace(self, text: str, counts: Counter[str]) -> str:
        """``text`` with every known value replaced; counts the replacements per label."""
        cached = self._replaced.get(text)
        if cached is None:
            cached = self._replaced[text] = self._replace(text)
        new, labels = cached
        if labels:  # most strings hold none (Counter.update costs an ABC check even then)
            counts.update(labels)
        return new

    def _replace(self, text: str) -> tuple[str, list[str]]:
        spans = self.find(text)
        if not spans:
            return text, []
        parts: list[str] = []
        labels: list[str] = []
        cursor = 0
        for start, end, label in spans:
            parts.append(text[cursor:start])
            parts.append(self._operate(text[start:end], label))
            labels.append(label)
            cursor = end
        parts.append(text[cursor:])
        return "".join(parts), labels

    def _operate(self, value: str, label: str) -> str:
        """The registered Presidio operator's substitute for one matched value (cached)."""
        new = self._substitutes.get((value, label))
        if new is None:
            params = dict(self.operators[label].params, entity_type=label)
            if self.guard is not None and "key_type" in params:
                params["widen"] = self.guard.widen(value, params["key_type"])
            # the base pseudonym the guard decided on (``key_pseudonym``, often from the key
            # pass: known_bases.py) instead of computing it again
            base = None
            if self.guard is not None and "key_type" in params and not params["widen"]:
                base = self.guard.base(value, params["key_type"], params.get("prefix"))
            new = base if base is not None else self.operator.operate(value, params)
            self._substitutes[(value, label)] = new
            self.emitted.add(new)
        return new
