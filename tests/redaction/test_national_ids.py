"""National and device ids through Presidio's maintained recognizers: published example values
are scrubbed, catalogue numbers from the vendored tau-bench runs are not."""

from __future__ import annotations

import pickle

import pytest

from golden_distill.redaction.recognizers.national_ids import ENTITIES, SPEC, build

#: Example values in the formats the issuing bodies publish (check digits valid where any).
EXAMPLES = [
    ("My NI number is JG 10 37 73 A", "JG 10 37 73 A"),
    ("printer mac 00:1A:2B:3C:4D:5E is offline", "00:1A:2B:3C:4D:5E"),
    ("codice fiscale RSSMRA85T10A562S", "RSSMRA85T10A562S"),
    ("mi NIF es 12345678Z", "12345678Z"),
    ("henkilötunnus 131052-308T", "131052-308T"),
    ("my TFN is 123 456 782", "123 456 782"),
    ("PAN card ABCPE1234F", "ABCPE1234F"),
    ("ITIN 912-70-1234 on file", "912-70-1234"),
    ("driving licence MORGA753116SM9IJ", "MORGA753116SM9IJ"),
]
#: Not ids: order and item numbers, amounts, times, flight numbers (tau-bench shapes).
NEGATIVES = [
    "order #W2378156 holds item 1151293680 at $272.33",
    "flight HAT001 departs 06:00:00, arrives 12:00:00+1",
    "tracking 843053632392 for product 6086499569",
    "reservation UM3OG5 on 2024-05-15",
]


@pytest.mark.parametrize(("text", "value"), EXAMPLES)
def test_published_examples_are_scrubbed(redactor, make_case, text: str, value: str) -> None:
    row = redactor.redact(make_case(user_input=text)).row
    assert row is not None
    assert value not in row["user_input"]
    assert any(f"<{e}_" in row["user_input"] for e in ENTITIES)


@pytest.mark.parametrize("text", NEGATIVES)
def test_catalogue_numbers_are_not_national_ids(text: str) -> None:
    assert not [r for rec in build() for r in rec.analyze(text, list(ENTITIES), None)]


def test_every_recognizers_gate_is_part_of_the_spec_prefilter() -> None:
    for text, _ in EXAMPLES:
        assert SPEC.prefilter.search(text), text


def test_the_built_recognizers_survive_pickling() -> None:
    """Process workers may receive an analyzer by pickle: the gates must travel with it."""
    for rec in build():
        copy = pickle.loads(pickle.dumps(rec))
        assert copy.supported_entities == rec.supported_entities
