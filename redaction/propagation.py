"""Value propagation: a value known to be personal (or a key) in one place of a case is replaced
in every place of that case, inside longer strings too.

A name found in a CRM response is thus also scrubbed from the user's message and the final
answer, and an order id pseudonymised in the call arguments reads the same in the tool reply and
the agent's text. Matching: keys case-sensitively, personal values case-insensitively, longest
first, and never inside a longer word or number (ASCII letter/digit look-arounds, which also work
next to Chinese text). Phone, card and id values are also searched in their compact and
digits-only forms. Replacement goes through Presidio's ``AnonymizerEngine`` with the registered
``keyed_pseudonym`` operator, so every substitute comes from one place.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import phonenumbers
from presidio_anonymizer import AnonymizerEngine
from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

from golden_distill.redaction.key_rules import KeyRule
from golden_distill.redaction.pseudonym import (
    OPERATOR_NAME,
    KeyedPseudonymOperator,
    key_pseudonym,
    value_token,
)

#: Entity types whose values are also looked for without separators.
DIGIT_ENTITIES = frozenset(
    {"PHONE_NUMBER", "CN_MOBILE", "CREDIT_CARD", "BANK_CARD", "CN_RESIDENT_ID", "ID_CARD", "IBAN_CODE"}
)
_MIN_DIGIT_VARIANT = 7
_SEPARATORS = re.compile(r"[\s().\-/]")


def make_anonymizer() -> AnonymizerEngine:
    engine = AnonymizerEngine()
    engine.add_anonymizer(KeyedPseudonymOperator)
    return engine


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


def _alternative(value: str, case_insensitive: bool) -> str:
    body = re.escape(value)
    if case_insensitive:
        body = f"(?i:{body})"
    pre = r"(?<![A-Za-z0-9])" if value[0].isalnum() else ""
    post = r"(?![A-Za-z0-9])" if value[-1].isalnum() else ""
    return pre + body + post


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

    def add_key(self, value: str, rule: KeyRule) -> None:
        if value and value not in self.keys:
            self.keys[value] = rule

    def add_pii(self, value: str, entity_type: str, *, propagate: bool = True) -> None:
        value = value.strip()
        if not value or value in self.keys:
            return
        folded = value.casefold()
        if folded not in self.pii:
            self.pii[folded] = entity_type
            self.pii_spelling[folded] = value
            if not propagate:
                self.no_propagate.add(folded)
            for v in variants(value, entity_type):
                self.add_pii(v, entity_type)
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

    def build(self, anonymizer: AnonymizerEngine) -> Propagator:
        return Propagator(self, anonymizer)


class Propagator:
    """Replaces every known value of one case in any string of that case."""

    def __init__(self, index: ValueIndex, anonymizer: AnonymizerEngine) -> None:
        self.secret = index.secret
        self.anonymizer = anonymizer
        self.keys = index.keys
        self.pii = index.pii
        alternatives: list[tuple[int, str]] = []
        for value in self.keys:
            if len(value) >= index.min_length:
                alternatives.append((len(value), _alternative(value, False)))
        self.case_sensitive = index.case_sensitive
        self.pii_spelling = index.pii_spelling
        local: set[str] = set()
        for folded, spelling in index.pii_spelling.items():
            long_enough = len(spelling) >= index.min_length_of(index.pii[folded])
            if long_enough and folded not in index.no_propagate:
                ci = folded not in index.case_sensitive
                alternatives.append((len(spelling), _alternative(spelling, ci)))
            else:
                local.add(spelling)
        alternatives.sort(key=lambda item: -item[0])
        #: known values not searched for inside strings (too short, or ordinary words): they
        #: are replaced only as whole values where a rule owns them
        self.local_values: set[str] = {v for v in self.keys if len(v) < index.min_length} | local
        self.pattern: re.Pattern[str] | None = (
            re.compile("|".join(alt for _, alt in alternatives)) if alternatives else None
        )
        self.operators: dict[str, OperatorConfig] = {}
        for rule in set(self.keys.values()):
            self.operators[rule.label] = OperatorConfig(
                OPERATOR_NAME, {"secret": self.secret, "key_type": rule.key_type, "prefix": rule.prefix}
            )
        for entity in set(self.pii.values()):
            self.operators[entity] = OperatorConfig(OPERATOR_NAME, {"secret": self.secret})
        self.emitted: set[str] = set()  # every substitute written (verification ignores them)

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
        rule = self.keys.get(text)
        if rule is not None:
            new = key_pseudonym(text, rule.key_type, self.secret, rule.prefix)
        else:
            new = value_token(text, self.pii[text.casefold()], self.secret)
        self.emitted.add(new)
        return new

    # -- inside strings ------------------------------------------------------------------
    def find(self, text: str) -> list[tuple[int, int, str]]:
        if self.pattern is None:
            return []
        found = []
        for m in self.pattern.finditer(text):
            label = self.label_of(m.group(0))
            if label is not None:
                found.append((m.start(), m.end(), label))
        return found

    def replace(self, text: str, counts: Counter[str]) -> str:
        spans = self.find(text)
        if not spans:
            return text
        results = [RecognizerResult(label, start, end, 1.0) for start, end, label in spans]
        engine_result = self.anonymizer.anonymize(
            text=text,
            analyzer_results=results,
            operators=self.operators,
            merge_entities_with_spaces=False,
        )
        for item in engine_result.items:
            counts[item.entity_type] += 1
            self.emitted.add(item.text)
        return engine_result.text
