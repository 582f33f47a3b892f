"""Normalised form: values vanish, structure stays."""

from __future__ import annotations

import pytest

from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.normalise import arguments_shape, step_token, value_shape
from golden_distill.filters.dedup.placeholders import normalise_text

KINDS = DedupConfig().text_placeholders


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "Please refund order ORD-12345 for $1,234.56, I'm Aaron Smith.",
            "Please refund order ORD-98765 for $17.00, I'm Maria Garcia.",
        ),
        ("Order #W2378156 arrived broken", "Order #W8301945 arrived broken"),
        ("mail me at a.b@example.com on 2026-11-28", "mail me at zz@corp.org on 2025-01-03"),
        ("call +1 555-123-4567 before May 20th", "call (030) 1234 5678 before June 3rd, 2026"),
        ("user mia_li_3668 wants help", "user noah_kim_1029 wants help"),
        ("see https://x.example/a?b=1 now", "see www.other.org/q now"),
        ("Hi <PERSON_1a2b3c4d>, done", "Hi <PERSON_99aa88bb>, done"),
        ("Hi Aaron", "hi   Aaron!!"),
    ],
)
def test_requests_differing_only_in_values_normalise_the_same(first, second):
    assert normalise_text(first, KINDS) == normalise_text(second, KINDS)


def test_different_requests_stay_different():
    a = normalise_text("Please cancel order ORD-1", KINDS)
    b = normalise_text("Please refund order ORD-1", KINDS)
    assert a != b
    assert "cancel" in a and "refund" in b


def test_placeholders_can_be_turned_off():
    assert "12345" in normalise_text("order 12345", ["email"])
    assert "12345" not in normalise_text("order 12345", ["number"])


def test_lower_case_words_are_not_taken_for_names():
    assert normalise_text("will you grant my request", KINDS) == "will you grant my request"


def test_missing_text_normalises_to_empty():
    assert normalise_text(None, KINDS) == ""


def test_value_shape_keeps_keys_and_types_only():
    first = {"orderId": "ORD-1", "total": 12.5, "items": [{"sku": "A", "qty": 2}], "gift": False}
    second = {"gift": True, "items": [{"qty": 9, "sku": "B"}] * 3, "total": 900, "orderId": "X"}
    assert value_shape(first) == value_shape(second)
    assert value_shape(first) == "{gift:b,items:[{qty:n,sku:s}],orderId:s,total:n}"


def test_value_shape_sees_a_new_key_or_a_type_change():
    assert value_shape({"a": 1}) != value_shape({"a": 1, "b": 1})
    assert value_shape({"a": 1}) != value_shape({"a": "1"})
    assert value_shape({"a": None}) != value_shape({"a": []})


def test_volatile_keys_do_not_change_the_shape():
    assert value_shape({"orderId": "A", "requestId": "r-1"}) == value_shape({"orderId": "B"})


def test_arguments_shape_handles_missing_and_broken_json():
    assert arguments_shape(None) == "-"
    assert arguments_shape("{not json") == "?"
    assert arguments_shape('{"a": [1, 2]}') == "{a:[n]}"


def test_step_token_marks_writes_and_status():
    assert step_token("erp_cancel_order", "error", True) == "erp_cancel_order:error:W"
    assert step_token("erp_get_order", None, None) == "erp_get_order:ok:R"


@pytest.mark.parametrize("ngram_range", [(1, 1), (1, 2), (2, 3)])
def test_word_ngram_analyzer_matches_scikit_learns(ngram_range):
    from sklearn.feature_extraction.text import HashingVectorizer

    from golden_distill.filters.dedup.features import WordNgrams

    texts = [
        normalise_text(t, KINDS)
        for t in ("Please refund order ORD-1 for Aaron, it arrived damaged", "请 取消订单", "", "a")
    ]
    ours = HashingVectorizer(analyzer=WordNgrams(ngram_range), alternate_sign=False)
    theirs = HashingVectorizer(
        token_pattern=r"(?u)\b\w+\b", ngram_range=ngram_range, lowercase=False, alternate_sign=False
    )
    assert (ours.transform(texts) != theirs.transform(texts)).nnz == 0
