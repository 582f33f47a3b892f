"""Phones in any country's format, bank accounts, ids with check digits, credentials in command
lines and logs, postcodes and coordinates: scrubbed where a trace carries them; the numbers of
ordinary agent traffic (amounts, item and order ids, times, counts) are not."""

from __future__ import annotations

import pytest

from golden_distill.redaction.recognizers.checked_ids import iban_ok, vin_ok

LEAKS = [
    ("Meu celular é (11) 91234-5678", "91234-5678"),
    ("请拨打 010-6552 9988 转 803", "6552 9988"),
    ("BEGIN:VCARD\nTEL;TYPE=cell:0171 1234567\nEND:VCARD", "1234567"),
    ("Handy: 0171 1234567", "1234567"),
    ("tel. 91 123 45 67 (Madrid)", "123 45 67"),
    ("SMS_SENT_07700900123", "07700900123"),
    ("amex 3782.822463.10005", "822463"),
    ("card 4242·4242·4242·4242", "4242·4242"),
    ("iban gb82 west 1234 5698 7654 32", "5698 7654"),
    ("https://bank.example/pay?iban=de89370400440532013000", "370400440532013000"),
    ("account 12345678 sort code 12-34-56", "12345678"),
    ("acct 000123456789 routing 021000021", "000123456789"),
    ("BIC DEUTDEFF account 0532013000", "0532013000"),
    ("ship to SW1A 1AA", "SW1A 1AA"),
    ("〒100-0001 東京都千代田区千代田1-1", "100-0001"),
    ("lat 51.5007, lon -0.1246", "51.5007"),
    ("meet at 48.85837, 2.29448", "48.85837"),
    ("EIN 12-3456789", "3456789"),
    ("VIN 1M8GDM9AXKP042788", "1M8GDM9AXKP042788"),
    ("MRN: 00123456", "00123456"),
    ("Set-Cookie: SESSIONID=9F8E7D6C5B4A39281706F5E4D3C2B1A0; Path=/", "9F8E7D6C5B4A"),
    ("sshpass -p 'Tr0ub4dor&3' ssh admin@host", "Tr0ub4dor"),
    ("2026-11-30 auth ok user=jsmith ip=10.0.0.5", "jsmith"),
    ("born on the 3rd of March 1986", "1986"),
    ("DOB 14.07.1979", "14.07.1979"),
]
KEPT = [
    "calculate (544.29 - 471.82) * 2",
    "2 items, total 1234.56, delivered 2024-05-15 at 20:00:00",
    "your account balance is 150 dollars",
    "flight HAT001 on 2024-05-16 departs 06:00:00, 3 passengers",
    "item 1151293680 and product 6086499569 are in stock",
    "I was born to do this, flight 2024-05-15",
]


@pytest.mark.parametrize(("text", "value"), LEAKS)
def test_values_after_their_cue_are_scrubbed(redactor, make_case, text: str, value: str) -> None:
    row = redactor.redact(make_case(user_input=text)).row
    assert row is not None, "refused instead of scrubbed"
    assert value not in row["user_input"], row["user_input"]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_numbers_are_kept(redactor, make_case, text: str) -> None:
    row = redactor.redact(make_case(user_input=text)).row
    assert row is not None and row["user_input"] == text


def test_check_digits() -> None:
    assert vin_ok("1M8GDM9AXKP042788") and not vin_ok("1M8GDM9A1KP042788")
    assert iban_ok("gb82 west 1234 5698 7654 32") and not iban_ok("GB83WEST12345698765432")
