"""Structured rules: key names and path tails decide what a value is."""

from __future__ import annotations

import pytest

from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.key_rules import KeyRule, NonPersonalRule, PiiRule, RuleMatcher


def test_rules_by_key_name_and_path_tail() -> None:
    m = RuleMatcher(RedactionConfig())
    assert m.match(("customer", "email")) == PiiRule("EMAIL_ADDRESS")
    assert m.match(("contact", "homePhone")) == PiiRule("PHONE_NUMBER")
    assert m.match(("billTo", "address", "city")) == PiiRule("ADDRESS")
    assert m.match(("FullName",)) == PiiRule("PERSON")  # case-insensitive
    order = m.match(("orderId",))
    assert isinstance(order, KeyRule) and order.key_type == "order" and order.label == "KEY_ORDER"
    pm = m.match(("payment_methods", "credit_card_1", "id"))
    assert isinstance(pm, KeyRule) and pm.key_type == "payment_method"
    assert m.match(("items", "item_id")) == NonPersonalRule()
    assert m.match(("status",)) is None and m.match(("amount",)) is None
    assert m.match(()) is None


def test_key_fields_win_over_personal_rules() -> None:
    cfg = RedactionConfig(key_rules={"*id": "ID_CARD"})
    rule = RuleMatcher(cfg).match(("user_id",))
    assert isinstance(rule, KeyRule) and rule.key_type == "user"


def test_the_last_key_prefilter_never_changes_a_decision() -> None:
    """``match`` skips, by one regex over the rules' last parts, the rules that cannot own a
    path; it must decide exactly as trying every rule in precedence order would."""
    from golden_distill.redaction.key_rules import _tail_matches

    m = RuleMatcher(RedactionConfig())
    keys = ["order:ORD-1", "Email", "homePhone", "id", "city", "x", "card_no", "3", "tel", "sku"]
    parents = ["", "customer", "address", "billTo", "payment_methods", "items", "orders"]
    checked = 0
    for parent in parents:
        for grand in ("", "user"):
            for key in keys:
                path = tuple(p for p in (grand, parent, key) if p)
                tail = path[-m._depth :]
                ordered = [r for r in m._rules if r[0][-1] != "*"] + [
                    r for r in m._rules if r[0][-1] == "*"
                ]  # a rule naming the key itself first, then those naming only a parent
                brute = next((rule for parts, rule in ordered if _tail_matches(parts, tail)), None)
                assert m.match(path) == brute, path
                checked += 1
    assert checked == len(parents) * 2 * len(keys)
    assert m.match(("billTo", "address", "order:ORD-1")) == PiiRule("ADDRESS")  # "address.*"


def test_last_key_patterns_decide_as_fnmatch_does() -> None:
    """``LastKeyPatterns`` (set lookup, prefix/suffix/infix tests, a regex for the rest) says
    yes exactly when a glob pattern fits the whole key (``fnmatchcase``), for every shape."""
    from fnmatch import fnmatchcase
    from itertools import product

    from golden_distill.redaction.key_rules import LastKeyPatterns

    patterns = [
        *sorted({p.split(".")[-1].lower() for p in RedactionConfig().sensitive_keys}),
        "email",
        "*_id",
        "holder*",
        "*secret*",
        "a?c",
        "[xy]z",
        "**deep",
        "pass*word",
        "*",
        "*.v",
    ]
    fragments = ["", "email", "_id", "holder", "secret", "abc", "xz", "deep", "pass", "word"]
    fragments += ["x", "\n", ".v", "ID", "my_", "*", "?", "api_key", "user_name", "é"]
    keys = {a + b + c for a, b, c in product(fragments, repeat=3)}
    for chosen in (patterns, patterns[:3], [p for p in patterns if "*" not in p], []):
        lasts = LastKeyPatterns(chosen)
        for key in keys:
            assert lasts.match(key) == any(fnmatchcase(key, p) for p in chosen), (chosen, key)


def test_a_rule_naming_the_key_beats_a_rule_naming_its_parent() -> None:
    """`address.country` is reference data (non-personal), not an ADDRESS through `*address.*`;
    the street under the same parent still is."""
    m = RuleMatcher(RedactionConfig())
    assert isinstance(m.match(("address", "country")), NonPersonalRule)
    assert m.match(("shipping_address", "country_code")) == NonPersonalRule()
    assert m.match(("address", "address1")) == PiiRule("ADDRESS")
    assert m.match(("address", "zip")) == PiiRule("ADDRESS")
    assert m.match(("address", "card_no")) != PiiRule("ADDRESS")


@pytest.mark.parametrize(
    ("key", "entity"),
    [
        ("homePhone", "PHONE_NUMBER"),
        ("Mobile Phone", "PHONE_NUMBER"),
        ("home_phone", "PHONE_NUMBER"),
        ("homephone", "PHONE_NUMBER"),
        ("PHONE_NUMBER", "PHONE_NUMBER"),
        ("Phone", "PHONE_NUMBER"),
        ("customerEmail", "EMAIL_ADDRESS"),
        ("Headphones", None),  # product names used as keys of a catalogue reply
        ("Smartphone", None),
        ("Automobile", None),
    ],
)
def test_a_capitalised_key_matches_an_infix_glob_only_at_a_word_part(
    key: str, entity: str | None
) -> None:
    rule = RuleMatcher(RedactionConfig()).match(("reply", key))
    assert (rule.entity_type if isinstance(rule, PiiRule) else rule) == entity
