"""Structured rules: a value's key path says what it is, before any recognizer looks at it.

``email``, ``*phone*``, ``address.*`` map a field's value to a personal entity type; key fields
(``orderId``, ``payment_methods.*.id``) map it to a primary-key type. A bare pattern matches the
last key of the path, a dotted one the path's tail; globs are case-insensitive. Key fields win
over personal rules (a user id that is an e-mail must still be pseudonymised the same way
everywhere so replay lookups find it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase, translate

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
    #: from ``sensitive_keys``: a PERSON rule then owns only name-shaped values outside
    #: tool/product/model contexts, an ACCOUNT rule only values with 5+ digits (``owns``)
    evidence: bool = False

    def owns(self, path: Path, value: object, tool: str = "") -> bool:
        """Whether this rule claims ``value`` at ``path`` (always, except guarded names).

        ``tool``: the name of the step whose arguments or response hold the value, when known;
        a ``name`` in ``get_product_details``'s response is a product's, not a person's."""
        if not self.evidence:
            return True
        if self.entity_type == "ACCOUNT":  # a ledger "account": "4000" is not an account number
            return sum(c.isdigit() for c in str(value)) >= 5
        if self.entity_type != "PERSON":
            return True
        return isinstance(value, str) and person_context_ok(path, tool) and name_shaped(value)


@dataclass(frozen=True, slots=True)
class NonPersonalRule:
    """A business identifier (item id, SKU): not scanned, and not personal where it recurs."""


Rule = KeyRule | PiiRule | NonPersonalRule


def _compile(pattern: str) -> tuple[str, ...]:
    return tuple(part.lower() for part in pattern.split("."))


#: Where a word part starts in a key with mixed case or spaces: after a separator or space, or
#: at a capital after a lower-case letter (``homePhone``, ``Mobile Phone``).
_PART_START = re.compile(r"(?<=[\s_\-.:/])[A-Za-z0-9]|(?<=[a-z0-9])[A-Z]")


def _key_fits(key: str, pattern: str) -> bool:
    """``fnmatch`` of ``key`` (any case) against a lower-case glob, except that in a key
    written with mixed case or spaces a leading ``*`` only skips whole word parts: there a key
    is a label of data more often than a field name ("Headphones", "Smartphone": products used
    as object keys in a catalogue reply), so ``*phone*`` takes ``homePhone`` and
    ``Mobile Phone`` but not ``Headphones``. All-lower and all-upper keys carry no word parts
    and keep plain glob matching (``homephone``, ``cell_phone``)."""
    low = key.lower()
    rest = pattern[1:]
    plain = " " not in key and (key == low or key == key.upper())
    if plain or not pattern.startswith("*") or not rest or rest[0] in "*?[":
        return fnmatchcase(low, pattern)
    if fnmatchcase(low, rest):
        return True
    return any(fnmatchcase(low[m.start() :], rest) for m in _PART_START.finditer(key))


def _tail_matches(parts: tuple[str, ...], path: Path) -> bool:
    if len(parts) > len(path):
        return False
    tail = path[len(path) - len(parts) :]
    return all(_key_fits(str(k), p) for k, p in zip(tail, parts, strict=True))


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
        for pattern, entity in config.sensitive_keys.items():
            self._rules.append((_compile(pattern), PiiRule(entity, evidence=True)))
        for pattern in config.non_personal_keys:
            self._rules.append((_compile(pattern), NonPersonalRule()))
        self._depth = max((len(parts) for parts, _ in self._rules), default=1)
        for parts, _ in self._rules:  # fnmatch compiles (and caches) a glob on first use
            for part in parts:
                fnmatchcase("", part)
                fnmatchcase("", part[1:])
        self._cache: dict[Path, Rule | None] = {}
        # every rule needs its last part to match the path's last key: one regex rules out, for
        # keys no rule names (ids used as object keys, "order:ORD-1"), all but the few rules
        # ending in "*" ("address.*"), without a cache entry per key
        lasts = sorted({parts[-1] for parts, _ in self._rules if parts[-1] != "*"})
        self._any_last = LastKeyPatterns(lasts)
        self._wild_last = [(parts, rule) for parts, rule in self._rules if parts[-1] == "*"]

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
        if not self._any_last.match(str(tail[-1]).lower()):
            return next((r for parts, r in self._wild_last if _tail_matches(parts, tail)), None)
        # a rule naming the key itself beats one that only names a parent ("address.*"), so
        # `address.country` is the country rule's, not the address rule's
        found = next(
            (r for parts, r in self._rules if parts[-1] != "*" and _tail_matches(parts, tail)),
            None,
        ) or next((r for parts, r in self._wild_last if _tail_matches(parts, tail)), None)
        if len(self._cache) < 100_000:
            self._cache[tail] = found
        return found


class LastKeyPatterns:
    """``match(key)``: does ``key`` (lower case) fit one of the glob patterns in full, as
    ``fnmatchcase`` would; the same answer as one regex of their ``translate``d forms, without
    trying every ``.*`` alternative at every key: plain names are a set lookup, ``name*``,
    ``*name`` and ``*name*`` are string tests, and only the other shapes go to a regex."""

    def __init__(self, patterns: list[str]) -> None:
        self.patterns = list(patterns)
        exact, prefixes, suffixes, inner, other = set(), [], [], [], []
        for p in patterns:
            body = p.strip("*")
            if any(c in body for c in "*?[") or not body:
                other.append(p)
            elif p.startswith("*") and p.endswith("*") and p[1:-1] == body:
                inner.append(body)
            elif p.startswith("*") and p[1:] == body:
                suffixes.append(body)
            elif p.endswith("*") and p[:-1] == body:
                prefixes.append(body)
            elif p == body:
                exact.add(body)
            else:  # "**name" and the like
                other.append(p)
        self._exact = frozenset(exact)
        self._prefixes = tuple(prefixes)
        self._suffixes = tuple(suffixes)
        self._inner = re.compile("|".join(map(re.escape, inner))) if inner else None
        self._other = re.compile("|".join(f"(?:{translate(p)})" for p in other)) if other else None

    def match(self, key: str) -> bool:
        return bool(
            key in self._exact
            or (self._suffixes and key.endswith(self._suffixes))
            or (self._prefixes and key.startswith(self._prefixes))
            or (self._inner is not None and self._inner.search(key))
            or (self._other is not None and self._other.match(key))
        )


_NAME = re.compile(r"^(?:[A-Za-z][A-Za-z'\-]*\.?)(?: [A-Za-z][A-Za-z'\-]*\.?){0,3}$")
_HAN_NAME = re.compile(r"^[\u4e00-\u9fff·]{2,5}$")
_NOT_PERSON_CONTEXT = re.compile(
    r"tool|model|function|file|product|item|index|intent|event|step|host|table|column|field"
    r"|app|service|queue|bucket|domain|brand|company|org|city|country|state|airport|category"
    r"|plan|type|kind|status|option|variant|attribute|param|metric|tag|label|sku|role",
    re.IGNORECASE,
)


#: Tools whose responses are about people even when their name also says "details" or "item".
_PERSON_TOOL = re.compile(
    r"user|customer|passenger|person|people|contact|member|employee|patient|profile|account|guest|client",
    re.IGNORECASE,
)


def name_shaped(value: str) -> bool:
    """One to four words of letters (or two to five Han characters): could be a person's name."""
    value = value.strip()
    return bool(_NAME.match(value) or _HAN_NAME.match(value))


def person_context_ok(path: Path, tool: str = "") -> bool:
    """No key on the path, nor the tool that returned it, says the name is a tool's, a
    product's, a model's... (a tool that speaks of users or customers keeps the guard off)."""
    if any(_NOT_PERSON_CONTEXT.search(str(k)) for k in path):
        return False
    return not (tool and _NOT_PERSON_CONTEXT.search(tool) and not person_tool(tool))


def person_tool(tool: str) -> bool:
    """A tool whose name says it deals with people (users, customers, passengers...)."""
    return bool(tool and _PERSON_TOOL.search(tool))
