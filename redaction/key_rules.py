"""Structured rules: a value's key path says what it is, before any recognizer looks at it.

``email``, ``*phone*``, ``address.*`` map a field's value to a personal entity type; key fields
(``orderId``, ``payment_methods.*.id``) map it to a primary-key type. A bare pattern matches the
last key of the path, a dotted one the path's tail; globs are case-insensitive. Key fields win
over personal rules (a user id that is an e-mail must still be pseudonymised the same way
everywhere so replay lookups find it).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from golden_distill.redaction.config import KeyField, RedactionConfig

Path = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class KeyRule:
    """A primary key: pseudonymised in the key type's namespace, keeping ``prefix``."""

    key_type: str
    prefix: str | None

    @property
    def label(self) -> str:
        """The entity label counts and reports use for this key type."""
        return f"KEY_{self.key_type.upper()}"


@dataclass(frozen=True, slots=True)
class PiiRule:
    entity_type: str


@dataclass(frozen=True, slots=True)
class NonPersonalRule:
    """A business identifier (item id, SKU): not scanned, and not personal where it recurs."""


Rule = KeyRule | PiiRule | NonPersonalRule


def _compile(pattern: str) -> tuple[str, ...]:
    return tuple(part.lower() for part in pattern.split("."))


def _tail_matches(parts: tuple[str, ...], path: Path) -> bool:
    if len(parts) > len(path):
        return False
    tail = path[len(path) - len(parts) :]
    return all(fnmatchcase(str(k).lower(), p) for k, p in zip(tail, parts, strict=True))


class RuleMatcher:
    """Which rule (if any) owns the value at a key path; results cached per path tail."""

    def __init__(self, config: RedactionConfig) -> None:
        self._rules: list[tuple[tuple[str, ...], Rule]] = []
        self.key_rules: dict[str, KeyRule] = {}
        for kf in config.key_fields:
            rule = self._key_rule(kf)
            for pattern in kf.fields:
                self._rules.append((_compile(pattern), rule))
        for pattern, entity in config.key_rules.items():
            self._rules.append((_compile(pattern), PiiRule(entity)))
        for pattern in config.non_personal_keys:
            self._rules.append((_compile(pattern), NonPersonalRule()))
        self._depth = max((len(parts) for parts, _ in self._rules), default=1)
        self._cache: dict[Path, Rule | None] = {}

    def _key_rule(self, kf: KeyField) -> KeyRule:
        rule = KeyRule(kf.key_type, kf.prefix)
        self.key_rules[kf.key_type] = rule
        return rule

    def match(self, path: Path) -> Rule | None:
        if not path:
            return None
        tail = path[-self._depth :]
        try:
            return self._cache[tail]
        except KeyError:
            pass
        found = next((rule for parts, rule in self._rules if _tail_matches(parts, tail)), None)
        if len(self._cache) < 100_000:
            self._cache[tail] = found
        return found
