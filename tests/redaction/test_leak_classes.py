"""Probes for the leak classes a fresh evaluation batch reported (national ids validated by
python-stdnum, e-mails spelled with another language's words for @ and dot), with values of our
own built from the schemes' published check-digit rules, each beside a look-alike that must
stay verbatim. Run through the same evaluator as the corpus (``bench/privacy_eval.py``)."""

from __future__ import annotations

import pytest
from privacy_probes import probe_tally

from golden_distill.redaction.recognizers.mrz import line2_ok
from golden_distill.redaction.recognizers.stdnum_ids import valid

#: (category, place, text, personal values, non-personal look-alikes)
PROBES = [
    ("national_id", "user_input", "Mon numéro de sécu : 2 87 06 75 123 456 38, merci",
     ["2 87 06 75 123 456 38"], []),
    ("national_id", "user_input", "Meine Steuer-ID ist 86095742719, Bestellung 12345678901",
     ["86095742719"], []),
    ("national_id", "messages", "Steuer-ID: 47 036 892 816", ["47 036 892 816"], []),
    ("national_id", "user_input", "mijn BSN is 999.996.356", ["999.996.356"], []),
    ("national_id", "user_input", "BSN 999996356 graag", ["999996356"], []),
    ("national_id", "user_input", "My Aadhaar number is 5347 1692 0182", ["5347 1692 0182"], []),
    ("national_id", "step_arguments", "name,aadhaar\nRavi,534716920182", ["534716920182"], []),
    ("national_id", "user_input", "CPF 529.982.247-25 para a nota", ["529.982.247-25"], []),
    ("national_id", "answer_text", "o cliente informou 529.982.247-25", ["529.982.247-25"], []),
    ("national_id", "user_input", "my SIN is 130 692 544", ["130 692 544"], []),
    ("national_id", "user_input", "Medicare card 2428 77813 2", ["2428 77813 2"], []),
    ("national_id", "user_input", "マイナンバーは 3141 5926 5352 です", ["3141 5926 5352"], []),
    ("national_id", "user_input", "mi CURP es GOMA850315MDFRRN02", ["GOMA850315MDFRRN02"], []),
    ("national_id", "answer_text", "https://example.gob.mx/tramite?curp=GOMA850315MDFRRN02&x=1",
     ["GOMA850315MDFRRN02"], []),
    ("national_id", "user_input", "PESEL: 02070803628", ["02070803628"], []),
    ("national_id", "user_input", "order 12345678901 shipped; total 1 234 567", [],
     ["12345678901", "1 234 567"]),
    ("email", "user_input", "escríbeme a juan.perez arroba ejemplo punto com, gracias",
     ["juan.perez@ejemplo.com"], []),
    ("email", "user_input", "Mail: max punkt mustermann klammeraffe beispiel punkt de",
     ["max.mustermann@beispiel.de"], []),
    ("email", "messages", "пишите на ivan.petrov собака mail точка ru", ["ivan.petrov@mail.ru"],
     []),
    ("email", "user_input", "la mia mail: mario.rossi chiocciola esempio punto it",
     ["mario.rossi@esempio.it"], []),
    ("email", "user_input", "mail jan apenstaartje voorbeeld punt nl", ["jan@voorbeeld.nl"], []),
    ("email", "user_input", "jan.kowalski małpa przyklad kropka pl", ["jan.kowalski@przyklad.pl"],
     []),
    ("email", "answer_text", "the point at issue: jean point dupont arobase exemple point fr",
     ["jean.dupont@exemple.fr"], ["the point at issue"]),
    ("passport", "step_arguments",
     "MRZ:\nP<DEUMUSTERFRAU<<ERIKA<LUISE<<<<<<<<<<<<<<<<\nC4X7Q2R915DEU8503150M3101012<<<<<<<<<<<<<<<0",
     ["MUSTERFRAU", "ERIKA", "LUISE", "C4X7Q2R91"], []),
    ("passport", "user_input", "meine Reisepass Nr. C01X00T47, Flug LH400", ["C01X00T47"],
     ["LH400"]),
    ("passport", "user_input", "mi pasaporte es XDA123456", ["XDA123456"], []),
    ("address", "user_input", "Bitte an Hauptstraße 12, 10115 Berlin liefern",
     ["Hauptstraße 12"], []),
    ("address", "user_input", "j'habite au 12 rue de la Paix, merci", ["12 rue de la Paix"], []),
    ("address", "user_input", "vivo en Calle Mayor 12, Madrid", ["Calle Mayor 12"], []),
    ("address", "user_input", "abito in Via Garibaldi 21", ["Via Garibaldi 21"], []),
    ("address", "user_input", "adres: Kalverstraat 92", ["Kalverstraat 92"], []),
    ("address", "user_input", "mieszkam na ul. Długa 5", ["ul. Długa 5"], []),
    ("address", "user_input", "адрес: ул. Ленина, д. 12", ["ул. Ленина, д. 12"], []),
    ("address", "user_input", "주소는 테헤란로 152 입니다, 가격으로 5000원", ["테헤란로 152"],
     ["가격으로 5000원"]),
    ("address", "user_input", "Weg 5 Minuten, Platz 3 in der Liste", [],
     ["Weg 5 Minuten", "Platz 3"]),
    ("phone", "user_input", "Meine Handynummer: 0151 2345 6789", ["0151 2345 6789"], []),
    ("phone", "user_input", "звоните 8 (916) 123-45-67 после обеда", ["8 (916) 123-45-67"], []),
    ("phone", "user_input", "numaram 0532 123 45 67", ["0532 123 45 67"], []),
    ("phone", "user_input", "κινητό 694 123 4567", ["694 123 4567"], []),
    ("phone", "user_input", "mi celular es 55 1234 5678", ["55 1234 5678"], []),
    # with more regions, ids and versions must still stay (5421337790 is a valid Turkish mobile)
    ("phone", "step_response",
     '{"name": "Rugged Smartphone Case", "product_id": "7731004512", "item_id": "5421337790"}',
     [], ["5421337790"]),
    ("phone", "answer_text",
     "The Garden Lantern (5421337790) is sold out; model gpt-4.1-2025-04-14", [],
     ["5421337790", "gpt-4.1-2025-04-14"]),
]  # fmt: skip


@pytest.fixture(scope="module")
def tally(redactor, make_case, make_step):
    return probe_tally(PROBES, "class", redactor, make_case, make_step)


def test_every_probe_value_is_caught(tally) -> None:
    assert not tally.leaks, tally.leaks
    assert tally.cases_refused == 0


def test_look_alikes_stay_verbatim(tally) -> None:
    assert tally.precision() == 1.0, tally.rewritten


@pytest.mark.parametrize(
    ("scheme", "good", "bad"),
    [("nl.bsn", "999996356", "999996357"), ("in_.aadhaar", "534716920182", "534716920183"),
     ("br.cpf", "529.982.247-25", "529.982.247-26"), ("ca.sin", "130 692 544", "130 692 545"),
     ("pl.pesel", "02070803628", "02070803629"), ("de.idnr", "86095742719", "86095742718")],
)  # fmt: skip
def test_the_check_digit_gates_a_hit(scheme: str, good: str, bad: str) -> None:
    assert valid(scheme)(good)
    assert not valid(scheme)(bad)


def test_an_mrz_line_is_taken_only_when_its_check_digits_hold() -> None:
    line = "C4X7Q2R915DEU8503150M3101012<<<<<<<<<<<<<<<0"
    assert line2_ok(line)
    assert not line2_ok(line[:9] + "6" + line[10:])  # the document number's check digit
    assert not line2_ok(line[:-1] + "1")  # the composite check digit
