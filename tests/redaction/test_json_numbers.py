"""Personal values stored as JSON numbers that are not integers (``recognizers/json_numbers.py``):
a card written as a float and coordinates under latitude/longitude keys."""

from __future__ import annotations

import pytest

from golden_distill.redaction.recognizers.json_numbers import personal_float


@pytest.mark.parametrize(
    ("response", "value"),
    [
        ('{"status": "ok", "card": 4111111111111111.0}', "4111111111111111"),
        ('{"status": "ok", "value": 5555555555554444.0}', "5555555555554444"),
        ('{"status": "ok", "lat": 37.774929, "lon": -122.419416}', "37.774929"),
        ('{"status": "ok", "geo": {"latitude": 51.50722, "longitude": -0.1275}}', "51.50722"),
    ],
)
def test_personal_json_numbers_are_replaced(
    redactor, make_case, make_step, response: str, value: str
) -> None:
    """A card stored as a JSON float and coordinates under lat/lon keys are not amounts."""
    row = make_case(user_input="help", steps=[make_step(0, "crm_lookup", {"q": "x"}, response)])
    result = redactor.redact(row)
    assert result.published, result.reason
    assert value not in result.row["steps"][0]["response"]


def test_amounts_stay_numbers(redactor, make_case, make_step) -> None:
    response = '{"status": "ok", "total": 3376.17, "lat_count": 12.5, "lon": 12.5}'
    row = make_case(user_input="help", steps=[make_step(0, "crm_lookup", {"q": "x"}, response)])
    result = redactor.redact(row)
    assert result.published, result.reason
    assert result.row["steps"][0]["response"] == response


@pytest.mark.parametrize(
    ("path", "value", "entity"),
    [
        (("card_number",), 4000056655665556.0, "CREDIT_CARD"),
        (("x",), 4000056655665557.0, None),  # fails Luhn: an ordinary big number
        (("lat",), 48.858844, "LOCATION"),
        (("lng",), 2.2945, "LOCATION"),
        (("lng",), 2.25, None),  # two decimals do not place anyone
        (("price",), 48.858844, None),
    ],
)
def test_personal_float(path: tuple[str, ...], value: float, entity: str | None) -> None:
    assert personal_float(path, value) == entity
