"""Bare names without a cue or a model: the recognizer finds full names of several shapes and
leaves capitalised business text alone; through the redactor a bare name is gone everywhere."""

from __future__ import annotations

import json

import pytest

from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.recognizers.bare_name import PREFILTER, find_bare_names


def _names(text: str) -> list[str]:
    return [text[s:e] for s, e, _ in find_bare_names(text)]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Oswin Fairleigh asked", "Oswin Fairleigh"),  # sentence start, unknown surname
        ("the refund went to Linnea Haverford today", "Linnea Haverford"),  # mid sentence
        ("Yesterday Grace Hill called", "Grace Hill"),  # both ordinary words, a known surname
        ("escalated for Corwin T. Ashgrove", "Corwin T. Ashgrove"),  # middle initial
        ("passed to Maren Lockwood-Pryce.", "Maren Lockwood-Pryce"),  # hyphenated surname
        ("Will Oswin Fairleigh call back?", "Oswin Fairleigh"),  # a verb before the name
        ("ask Jack O'Brien or Frank McAllister", "Jack O'Brien"),
        ("Thanks Adaeze Nwachukwu for waiting", "Adaeze Nwachukwu"),  # no list knows her
        ('{"summary": "Ignatius Fairweather wants a callback"}', "Ignatius Fairweather"),
    ],
)
def test_bare_names_of_several_shapes_are_found(text: str, name: str) -> None:
    assert name in _names(text)


@pytest.mark.parametrize(
    "text",
    [
        "Order W2378156 delivered, status DELIVERED, total 1299.50 USD",
        "Flight HAT123 from JFK to LAX departs 2024-05-16T08:00:00",
        "The Grace Period ends on Monday",
        "Price Difference: 12.50 after the Bulk Discount",
        "ship to 12 Laurel Lane, Springfield",  # an address: the address recognizer's
        "Bradley Ltd and Mills Inc were notified",  # companies
        "Wayne County tax applies",
        "served by John F. Kennedy International Airport (JFK)",
        "the Google Assistant-compatible speaker and the Yoga Mat",
        "get_order_details returned Pending",
        "I Am Here. Thank You",
    ],
)
def test_capitalised_business_text_is_left_alone(text: str) -> None:
    assert _names(text) == []


def test_the_prefilter_is_the_detector_and_pickles_by_reference() -> None:
    import pickle

    assert PREFILTER.search("status DELIVERED for Order W1") is None
    assert PREFILTER.search("Perpetua Skelding needs the invoice") is not None
    assert pickle.loads(pickle.dumps(PREFILTER)) is PREFILTER


def test_the_analyzer_reports_bare_names_as_person() -> None:
    analyzer = TextAnalyzer(RedactionConfig())
    text = "ok so Hope Castellanos will pick it up at noon"
    found = {(f.entity_type, text[f.start : f.end]) for f in analyzer.analyze(text, 0.3)}
    assert ("PERSON", "Hope Castellanos") in found


def test_a_bare_name_is_redacted_everywhere_in_the_case(make_case, redactor) -> None:
    row = make_case(user_input="Perpetua Skelding needs the invoice reissued")
    row["outcome"]["answer_text"] = "Done, the invoice goes to Perpetua Skelding by mail."
    result = redactor.redact(row)
    assert result.row is not None, result.reason
    text = json.dumps(result.row, default=str)
    assert "Perpetua" not in text and "Skelding" not in text
    assert "<PERSON_" in result.row["user_input"]
