"""Keyed pseudonyms: deterministic, keyed, namespaced, format-keeping; a Presidio Operator."""

from __future__ import annotations

import random
import re
import string

import pytest
from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.propagation import make_anonymizer
from golden_distill.redaction.pseudonym import (
    OPERATOR_NAME,
    KeyedPseudonymOperator,
    _generic_pseudonym,
    key_pseudonym,
    value_token,
)

SECRET = b"pseudonym-test-Xc7Vb2Nm9Qw4Er8Ty1Ui5Op3As6Df0Gh"
OTHER = b"b" * 32


def test_same_value_same_key_same_pseudonym() -> None:
    assert key_pseudonym("#W2378156", "order", SECRET, "#W") == key_pseudonym(
        "#W2378156", "order", SECRET, "#W"
    )


def test_different_key_or_type_gives_different_pseudonym() -> None:
    base = key_pseudonym("ORD-123456", "order", SECRET, "ORD-")
    assert key_pseudonym("ORD-123456", "order", OTHER, "ORD-") != base
    assert key_pseudonym("ORD-123456", "user", SECRET, "ORD-") != base


@pytest.mark.parametrize(
    ("value", "prefix", "shape"),
    [
        ("#W2378156", "#W|ORD-", r"#W\d{7}"),
        ("ORD-000123", "#W|ORD-", r"ORD-\d{6}"),
        ("credit_card_7815826", "credit_card_|paypal_", r"credit_card_\d{7}"),
        ("NO6JO3", None, r"[A-Z][A-Z]\d[A-Z][A-Z]\d"),
        ("noah_brown_6181", None, r"[a-z]{4}_[a-z]{5}_\d{4}"),
    ],
)
def test_format_is_kept(value: str, prefix: str | None, shape: str) -> None:
    out = key_pseudonym(value, "k", SECRET, prefix)
    assert re.fullmatch(shape, out), out
    assert out != value


def test_user_id_pseudonym_drops_the_name_in_it() -> None:
    out = key_pseudonym("noah_brown_6181", "user", SECRET)
    assert "noah" not in out and "brown" not in out


def test_value_token_is_case_insensitive_and_typed() -> None:
    assert value_token("Yusuf Rossi", "PERSON", SECRET) == value_token(
        "yusuf rossi", "PERSON", SECRET
    )
    assert re.fullmatch(r"<PERSON_[0-9a-f]{8}>", value_token("Yusuf", "PERSON", SECRET))
    assert value_token("Yusuf", "PERSON", OTHER) != value_token("Yusuf", "PERSON", SECRET)


def test_operator_is_registered_with_presidio_anonymizer() -> None:
    engine = make_anonymizer()
    assert OPERATOR_NAME in engine.get_anonymizers()
    text = "order #W2378156 for Mei"
    result = engine.anonymize(
        text=text,
        analyzer_results=[
            RecognizerResult("KEY_ORDER", 6, 15, 1.0),
            RecognizerResult("PERSON", 20, 23, 1.0),
        ],
        operators={
            "KEY_ORDER": OperatorConfig(
                OPERATOR_NAME, {"secret": SECRET, "key_type": "order", "prefix": "#W"}
            ),
            "PERSON": OperatorConfig(OPERATOR_NAME, {"secret": SECRET}),
        },
    )
    expected_order = key_pseudonym("#W2378156", "order", SECRET, "#W")
    assert result.text == f"order {expected_order} for {value_token('Mei', 'PERSON', SECRET)}"


def test_operator_rejects_a_short_secret() -> None:
    with pytest.raises(ValueError):
        KeyedPseudonymOperator().validate({"secret": b"short"})


def test_key_repr_never_shows_the_secret() -> None:
    key = PseudonymKey(SECRET, "test")
    assert "aaaa" not in repr(key)
    assert key.key_id.startswith("k_") and "aaaa" not in key.key_id


@pytest.mark.parametrize(
    ("value", "key_type", "prefix", "widen", "expected"),
    [  # computed by the implementation before the round prototypes were precomputed
        ("#W2378156", "order", "#W", 0, "#W4249749"),
        ("ORD-55120", "order", "ORD-", 0, "ORD-22145"),
        ("sara_doe_496", "user", None, 0, "fckb_zxe_728"),
        ("tenant-042", "tenant", None, 0, "ufvzjw-683"),
        ("A1B2C3D4", "id", None, 0, "J3B7X0W2"),
        ("4111111111111111", "id", None, 0, "4100638163026267"),
        ("#W2378156", "order", "#W", 2, "#W383317899"),
        # non-ASCII: the character loop (``_generic_pseudonym``), computed before it was split
        ("ÄB-12", "id", None, 0, "ÄC-86"),
        ("Ab-12é", "id", None, 0, "Pv-67é"),
    ],
)
def test_pseudonyms_are_stable_across_releases(
    value: str, key_type: str, prefix: str | None, widen: int, expected: str
) -> None:
    """Published sets and replay rely on the same pseudonym for the same value in every
    version: a faster implementation must not change one."""
    key_pseudonym.cache_clear()
    assert key_pseudonym(value, key_type, SECRET, prefix, widen) == expected


def _by_character_loop(value: str, key_type: str, prefix: str | None, widen: int) -> str:
    """``key_pseudonym`` through the per-character path every value took before ASCII values
    got their precomputed shapes."""
    prefix_re = re.compile(prefix) if prefix else None
    match = prefix_re.match(value) if prefix_re else None
    kept = match.group(0) if match else ""
    rest = value[len(kept) :] + "0" * widen
    return _generic_pseudonym(value, key_type, SECRET, prefix, widen, kept, rest, prefix_re)


def test_ascii_shapes_give_the_character_loops_pseudonyms() -> None:
    """The fast path (runs of one class, ``int()`` and two-letter tables) publishes exactly
    what the character loop does, over random shapes: mixed case, punctuation, leading zeros,
    prefixes kept or not, widenings."""
    rng = random.Random(11)
    alphabet = string.digits * 3 + string.ascii_letters + "-_#. /:"
    prefixes = [None, "#W|ORD-|SO-", "t-"]
    checked = 0
    for _ in range(3000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16)))
        prefix = rng.choice(prefixes)
        if prefix and rng.random() < 0.5:
            value = rng.choice(prefix.split("|")) + value
        key_type, widen = rng.choice(["order", "user", "id"]), rng.choice([0, 0, 0, 1, 2])
        key_pseudonym.cache_clear()
        assert key_pseudonym(value, key_type, SECRET, prefix, widen) == _by_character_loop(
            value, key_type, prefix, widen
        ), (value, key_type, prefix, widen)
        checked += 1
    assert checked == 3000
