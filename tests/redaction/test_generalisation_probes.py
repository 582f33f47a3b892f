"""Probes built from format specifications and public examples, one or more per category the
issue lists as still leaking (dates of birth in prose, coordinates, UK NINO variants, Chinese
resident ids split 6-8-4, US EIN/ITIN, US and UK driving licences, VIN, medical record
numbers, phones in words or with letters for digits, account numbers beside a routing number,
sort code or BIC). None of them is in the labelled corpus; they are run through the same
evaluator (``bench/privacy_eval.py``: decoded views, digits-only forms) in one batch, each
with a non-personal look-alike beside it that must stay verbatim."""

from __future__ import annotations

import re

import pytest
from privacy_probes import probe_tally

from golden_distill.redaction.recognizers.date_formats import DATE, keyed_date
from golden_distill.redaction.redactor import Redactor

#: (category, place, text, personal values, non-personal look-alikes)
PROBES = [
    ("dob", "answer_text", "Thanks, I have your date of birth as 3rd of March 1986 (order "
     "placed 2024-05-01).", ["3rd of March 1986"], ["2024-05-01"]),
    ("dob", "handoff_reason", "Caller verified with DOB 14.07.1979, flight at 20:00:00",
     ["14.07.1979"], ["20:00:00"]),
    ("dob", "user_input", "I was born on the 21st of June, 1975 in Leeds", ["21st of June, 1975"],
     []),
    ("dob", "user_input", "my birthday is 7/4/1990; deliver on 7/5/2025", ["7/4/1990"],
     ["7/5/2025"]),
    ("dob", "messages", "DOB: 04-Jul-1990", ["04-Jul-1990"], []),
    ("dob", "step_arguments", '{"note": "born March 3rd 1986"}', ["March 3rd 1986"], []),
    ("dob", "user_input", "Geburtsdatum: 14.07.1979", ["14.07.1979"], []),
    ("dob", "user_input", "je suis né le 1er mars 1986", ["1er mars 1986"], []),
    ("dob", "user_input", "data de nascimento 03/03/1986", ["03/03/1986"], []),
    ("dob", "user_input", "生年月日：1986年3月3日", ["1986年3月3日"], []),
    ("dob", "final_state", "Your date of birth (1979-07-14) is confirmed.", ["1979-07-14"], []),
    ("dob", "handoff_reason", "date of birth mismatch: customer says 12 Sept 1980",
     ["12 Sept 1980"], []),
    ("gps", "user_input", "I'm at 51.5072, -0.1276 right now, total $120.50", ["51.5072"],
     ["$120.50"]),
    ("gps", "user_input", "pick me up at 51.5072° N, 0.1276° W", ["51.5072"], []),
    ("gps", "messages", "location 40°41'21.4\"N 74°02'40.2\"W", ["40°41'21.4\"N"], []),
    ("gps", "answer_text", "https://maps.google.com/?q=48.8584,2.2945", ["48.8584"], []),
    ("gps", "step_response", '{"geo": "geo:37.786971,-122.399677"}', ["37.786971"], []),
    ("gps", "step_response", '{"type": "Point", "coordinates": [2.294481, 48.858370]}',
     ["48.85837"], []),
    ("gps", "step_response", '{"lat": "51.5072", "lng": "-0.1276", "unit": "15-inch"}',
     ["51.5072"], ["15-inch"]),
    ("nino", "user_input", "my NI number is ab 12 34 56 c", ["ab 12 34 56 c"], []),
    ("nino", "user_input", "National Insurance: JG103778A", ["JG103778A"], []),
    ("nino", "answer_text", "NINO on file: jg103778a", ["jg103778a"], []),
    ("nino", "handoff_reason", "ni no. QQ 12 34 56 C", ["QQ 12 34 56 C"], []),
    ("cn_id", "user_input", "身份证号 110105 19491231 002X", ["110105 19491231 002X"], []),
    ("cn_id", "user_input", "ID 110105-19491231-002X", ["110105-19491231-002X"], []),
    ("cn_id", "user_input", "身份证：11010519491231002x", ["11010519491231002x"], []),
    ("ein", "user_input", "Tax ID (EIN): 12-3456789", ["12-3456789"], []),
    ("ein", "user_input", "our FEIN 123456789 for the invoice", ["123456789"], []),
    ("ein", "answer_text", "Employer ID Number 98-7654321 recorded", ["98-7654321"], []),
    ("itin", "user_input", "my ITIN is 912-70-1234", ["912-70-1234"], []),
    ("us_dl", "user_input", "DL# D1234567 for the Water Bottle order", ["D1234567"],
     ["Water Bottle"]),
    ("us_dl", "user_input", "driver's license no. 123456789 (NY)", ["123456789"], []),
    ("us_dl", "user_input", "Florida driver licence D123-456-78-901-0", ["D123-456-78-901-0"],
     []),
    ("uk_dl", "user_input", "driving licence MORGA657054SM9IJ", ["MORGA657054SM9IJ"], []),
    ("uk_dl", "user_input", "licence number MORGA 657054 SM9IJ", ["MORGA 657054 SM9IJ"], []),
    ("vin", "user_input", "VIN: 1HGCM82633A004352", ["1HGCM82633A004352"], []),
    ("vin", "step_response", '{"vehicle": "1hgcm82633a004352"}', ["1hgcm82633a004352"], []),
    ("mrn", "handoff_reason", "patient MRN 00123456 needs review", ["00123456"], []),
    ("mrn", "user_input", "medical record number: MRN-556677", ["MRN-556677"], []),
    ("phone", "user_input", "call me on zero seven seven zero zero nine double zero four five "
     "six", ["07700900456"], []),
    ("phone", "answer_text", "we will ring you at four one five, five five five, zero one "
     "seven seven", ["4155550177"], []),
    ("phone", "user_input", "my number is O2O 7946 O958", ["020 7946 0958"], []),
    ("phone", "user_input", "cell: 4l5-555-Ol77", ["415-555-0177"], []),
    ("phone", "user_input", "mi celular es seis uno dos tres cuatro cinco seis siete ocho",
     ["612345678"], []),
    ("account", "user_input", "routing 021000021 account 123456789012", ["123456789012"], []),
    ("account", "user_input", "Checking 000123456789, routing number 011000015",
     ["000123456789"], []),
    ("account", "user_input", "BIC DEUTDEFF, Kontonummer 0532013000", ["0532013000"], []),
    ("account", "user_input", "sort code 20-00-00 a/c no. 12345678", ["12345678"], []),
    ("account", "answer_text", "Wire to ABA 026009593, acct 4417123456", ["4417123456"], []),
    ("account", "user_input", "please close my savings account ACCT-00998877",
     ["ACCT-00998877"], []),
    ("account", "user_input", "SWIFT BOFAUS3N account number 8837261950", ["8837261950"], []),
    ("account", "user_input", "send it to 8837261950 (routing 026009593)", ["8837261950"], []),
    ("look-alike", "step_response", '{"order_routing": "hub 1234567", "lat_count": 12.5}', [],
     ["hub 1234567", "12.5"]),
]  # fmt: skip


@pytest.fixture(scope="module")
def tally(redactor: Redactor, make_case, make_step):
    return probe_tally(PROBES, "probe", redactor, make_case, make_step)


def test_every_probe_value_is_caught(tally) -> None:
    assert not tally.leaks, tally.leaks
    assert tally.cases_refused == 0


def test_look_alikes_stay_verbatim(tally) -> None:
    assert tally.precision() == 1.0, tally.rewritten


@pytest.mark.parametrize(
    "value",
    ["3rd of March 1986", "14.07.1979", "17 de agosto de 1971", "14. Juli 1979", "1984年5月6日",
     "1990-05-14", "March 3, 1986", "07/14/1979", "1er mars 1986", "04-Jul-1990", "05/06/79"],
)  # fmt: skip
def test_a_date_of_birth_becomes_another_valid_date_in_its_layout(value: str, secret) -> None:
    from datetime import date

    new = keyed_date(value, secret)
    assert new is not None and new != value and re.fullmatch(DATE, new)
    assert new == keyed_date(value, secret)  # stable: the same value reads the same everywhere
    numbers = [int(n) for n in re.findall(r"\d+", new)]
    if len(numbers) == 3 and numbers[0] > 31:  # year first: ISO, 年月日
        date(*numbers)
    elif len(numbers) == 3:  # day and month in either order: valid read either way
        assert 1 <= numbers[0] <= 12 and 1 <= numbers[1] <= 12
    else:  # a month name: the day is a day of every month
        assert 1 <= min(numbers) <= 28 and max(numbers) >= 1935


def test_a_date_of_birth_in_free_text_is_replaced_by_a_date(redactor: Redactor, make_case) -> None:
    row = make_case(user_input="Hi, I was born on 14.07.1979 and need my booking changed")
    result = redactor.redact(row)
    assert result.published, result.reason
    text = result.row["user_input"]
    assert "14.07.1979" not in text
    assert re.search(r"born on \d{2}\.\d{2}\.\d{4} and", text), text
