"""Precision: reference data (times, quantities, countries, products, tool names, arithmetic)
survives redaction, while the personal values beside it still go."""

from __future__ import annotations

import json

import pytest

from golden_distill.redaction.case_scan import identifier_shaped
from golden_distill.redaction.recognizers.phone import _rejected

PRODUCT = {"name": "Mechanical Keyboard", "product_id": "1656367028", "variants": {}}
USER = {"name": "Dalia Okafor", "email": "dalia.okafor@example.org", "user_id": "dalia_o_4410"}


@pytest.mark.parametrize(
    ("value", "shaped"),
    [
        ("20:00:00", False),
        ("03:00:00+1", False),
        ("07:30", False),
        ("PT1H30M", False),
        ("1000ml", False),
        ("6.1-inch", False),
        ("15-inch", False),
        ("500GB", False),
        ("2026-11-30", False),
        ("ACCT5442590352", True),
        ("1234ab", True),
        ("HAT0012", True),
        ("7WPL39", True),
    ],
)
def test_times_durations_and_quantities_are_not_identifiers(value: str, shaped: bool) -> None:
    assert identifier_shaped(value) is shaped


def test_arithmetic_on_amounts_is_not_a_phone_number() -> None:
    assert _rejected("(544.29 - 471.82", "")
    assert not _rejected("+1 415-555-0134", "")
    assert not _rejected("01.23.45.67.89", "call me on ")


def _messages(*replies: tuple[str, dict]) -> str:
    return json.dumps(
        [{"role": "tool", "name": n, "tool_call_id": f"c{i}", "content": json.dumps(body)}
         for i, (n, body) in enumerate(replies)]
    )  # fmt: skip


def test_a_products_name_in_the_message_history_is_kept_a_users_is_not(
    redactor, make_case, make_step
) -> None:
    case = make_case(
        user_input="Is the Mechanical Keyboard in stock?",
        steps=[
            make_step(0, "get_product_details", {"product_id": "1656367028"}, PRODUCT),
            make_step(1, "get_user_details", {"user_id": "dalia_o_4410"}, USER),
        ],
    )
    case["context"]["messages"] = _messages(
        ("get_product_details", PRODUCT), ("get_user_details", USER)
    )
    before = json.dumps(case).count("Mechanical Keyboard")
    row = redactor.redact(case).row
    assert row is not None
    text = json.dumps(row)
    assert before == 3 and text.count("Mechanical Keyboard") == before  # request, step, message
    assert "Dalia" not in text and "Okafor" not in text and "dalia.okafor" not in text
    replies = [m["name"] for m in json.loads(row["context"]["messages"])]
    assert replies == ["get_product_details", "get_user_details"]  # tool names verbatim


def test_a_country_is_kept_beside_an_address_that_is_not(redactor, make_case, make_step) -> None:
    address = {"address1": "17 Rue Lepic", "city": "Paris", "zip": "75018", "country": "France"}
    case = make_case(
        steps=[make_step(0, "get_user_details", {"user_id": "u-1"}, {"address": address})]
    )
    row = redactor.redact(case).row
    assert row is not None
    response = json.loads(row["steps"][0]["response"])["address"]
    assert response["country"] == "France"
    assert "Lepic" not in row["steps"][0]["response"] and response["zip"] != "75018"


def test_an_account_number_in_free_text_gets_the_pseudonym_it_has_under_its_key(
    redactor, make_case, make_step
) -> None:
    """What the case knows it uses: the value the tool reply holds under ``accountNo`` is the
    same value the user typed, and both read the same after redaction (so does a phone number
    inside a final-state label)."""
    case = make_case(
        user_input="I want to close account ACCT5442590352 please",
        steps=[
            make_step(0, "crm_get_account", {"q": "close"}, {"accountNo": "ACCT5442590352"}),
            make_step(1, "sms_send", {"phone": "07700900123"}, {"ok": True}),
        ],
    )
    case["outcome"] = {**case["outcome"], "final_state": "SMS_SENT_07700900123"}
    row = redactor.redact(case).row
    assert row is not None
    keyed = json.loads(row["steps"][0]["response"])["accountNo"]
    assert keyed != "ACCT5442590352" and keyed in row["user_input"]
    assert "5442590352" not in json.dumps(row)
    phone = json.loads(row["steps"][1]["arguments"])["phone"]
    assert row["outcome"]["final_state"] == f"SMS_SENT_{phone}"
