"""Names beyond English: cues in other languages and scripts, diacritics, adjacent name parts,
names in paths, SQL, CSV, handles and profile URLs; and what must stay (product names, tools)."""

from __future__ import annotations

import orjson
import pytest

from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.recognizers.name_parts import widen, widened_names
from golden_distill.redaction.redactor import Redactor


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return TextAnalyzer(RedactionConfig())


def persons(analyzer: TextAnalyzer, text: str) -> set[str]:
    return {text[f.start : f.end] for f in analyzer.analyze(text, 0.3) if f.entity_type == "PERSON"}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("私は小野寺綾香と申します。よろしくお願いします。", "小野寺綾香"),
        ("はじめまして、桐生と申します", "桐生"),
        ("我的名字叫司马青云，请帮我退款", "司马青云"),
        ("नमस्ते, मेरा नाम अनिरुद्ध भार्गव है और मुझे मदद चाहिए", "अनिरुद्ध भार्गव"),
        ("مرحبا، اسمي يوسف الحداد وأريد إلغاء الطلب", "يوسف الحداد"),
        ("Xin chào, tôi tên là Phạm Thị Thu Hằng và tôi cần hỗ trợ", "Phạm Thị Thu Hằng"),
        ("Здравствуйте! Меня зовут Ярослава Кудрявцева.", "Ярослава Кудрявцева"),
        ("안녕하세요, 저는 한서윤입니다", "한서윤"),
        ("สวัสดีครับ ผมชื่อธนากร ครับ", "ธนากร"),
        ("Dear Radomír Šťastný, your refund is on its way", "Radomír Šťastný"),
        ("Vážený pane Křižánku, děkujeme za objednávku", "Křižánku"),
        ("Sehr geehrte Frau Lütkemeyer, vielen Dank", "Lütkemeyer"),
        ("Hola, me llamo José Ángel Barragán y tengo un problema", "José Ángel Barragán"),
        ("Bonjour, je m'appelle Éloïse Vautrin", "Éloïse Vautrin"),
        ("Olá, meu nome é João Conceição", "João Conceição"),
    ],
)
def test_names_after_cues_in_other_languages_and_scripts(
    analyzer: TextAnalyzer, text: str, name: str
) -> None:
    assert name in persons(analyzer, text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("cat /home/leopold.wexcombe/.bash_history", "leopold.wexcombe"),
        ("saved to C:\\Users\\Leopold.Wexcombe\\Documents\\q3.xlsx", "Leopold.Wexcombe"),
        ("open /Users/lwexcombe/Downloads/invoice.pdf", "lwexcombe"),
        ("SELECT id FROM customers WHERE last_name = 'Wexcombe-Thorne' LIMIT 1", "Wexcombe-Thorne"),
        ("UPDATE t SET contact = 'Philippa Dunmore' WHERE id = 4", "Philippa Dunmore"),
        ("id;full_name;city\n1;Philippa Dunmore;Leeds\n2;Osric Fenwold;York", "Osric Fenwold"),
        ("name,plan\nMargaret Holloway,gold\nWater Bottle,none", "Margaret Holloway"),
        ("thanks to @pdunmore_88 for the report", "pdunmore_88"),
        ("profile: https://github.com/osric-fenwold", "osric-fenwold"),
        ("see https://www.linkedin.com/in/philippa-dunmore-7b21a9/", "philippa-dunmore-7b21a9"),
    ],
)
def test_names_in_paths_queries_tables_handles_and_urls(
    analyzer: TextAnalyzer, text: str, name: str
) -> None:
    assert name in persons(analyzer, text)


@pytest.mark.parametrize(
    "text",
    [
        "I bought a Water Bottle and a Mechanical Keyboard, plus a desk lamp",
        "Hi, I want to return the Water Bottle",
        "Dear Customer, your order has shipped",
        "Hello World",
        "Use the think tool, then calculate the total",
        "Flight from JFK to LAX departs at 20:00:00",
        "cd /home/runner/work/repo && ls /Users/Shared",
        "see https://github.com/features and https://github.com/microsoft/presidio",
        "@property\ndef name(self): ...",
        "{'thought': \"next action name='exchange_delivered_order_items' kwargs={}\"}",
        "Меня интересует доставка в Москву",  # a Russian sentence with no name cue
        "أنا أريد إلغاء طلبي",  # "I want to cancel my order": "I" is no name cue
        "担当者様、ご確認ください",  # a role with an honorific
        "고객님, 주문이 취소되었습니다",  # "dear customer"
        "item,price,qty\nWater Bottle,12.99,2",  # no name column
        "name,price\nWater Bottle,12.99\nMechanical Keyboard,89.00",  # a product table
    ],
)
def test_no_names_in_products_tools_and_plain_text(analyzer: TextAnalyzer, text: str) -> None:
    assert persons(analyzer, text) == set()


def test_a_found_name_takes_the_name_parts_beside_it() -> None:
    text = "Estimada señora María José Ortega Ibáñez, gracias"
    start = text.index("Ibáñez")
    lo, hi = widen(text, start, start + len("Ibáñez"))
    assert text[lo:hi] == "Ortega Ibáñez" or text[lo:hi].endswith("José Ortega Ibáñez")
    water = "the Water Bottle Ibáñez"  # ordinary words never join
    i = water.index("Ibáñez")
    assert widen(water, i, len(water)) == (i, len(water))
    assert widen("Dear Ibáñez", 5, 11) == (5, 11)  # nor greetings and titles


def test_known_surname_brings_the_given_names_left_beside_it() -> None:
    texts = ["Thanks José Ángel Barragán, the refund is done", "Barragán confirmed"]
    assert widened_names(["Barragán"], texts) == {"José Ángel Barragán"}


def test_a_surname_under_a_key_takes_the_given_names_in_free_text(
    redactor: Redactor, make_case, make_step
) -> None:
    row = make_case(
        user_input="Hola, soy José Ángel Barragán y quiero cancelar",
        steps=[
            make_step(
                0,
                "crm_get_customer",
                {"customerId": "CUST-9"},
                '{"lastName": "Barragán", "status": "ACTIVE"}',
            )
        ],
    )
    result = redactor.redact(row)
    assert result.published, result.reason
    out = orjson.dumps(result.row, default=str).decode()
    for part in ("Barrag", "José", "Ángel", "\\u00c1ngel"):
        assert part not in out, part


def test_names_in_other_scripts_and_places_never_reach_a_published_case(
    redactor: Redactor, make_case, make_step
) -> None:
    messages = [
        "私は小野寺綾香と申します",
        "मेरा नाम अनिरुद्ध भार्गव है",
        "اسمي يوسف الحداد",
        "Tôi tên là Phạm Thị Thu Hằng",
        "Dear Radomír Šťastný,",
    ]
    row = make_case(
        user_input=" / ".join(messages),
        steps=[
            make_step(
                0,
                "shell_run",
                {"cmd": "ls /home/leopold.wexcombe/reports"},
                orjson.dumps(
                    {"stdout": "id,full_name\n7,Osric Fenwold\n", "by": "@pdunmore_88"}
                ).decode(),
            )
        ],
    )
    result = redactor.redact(row)
    assert result.published, result.reason
    out = orjson.loads(orjson.dumps(result.row, default=str))
    text = orjson.dumps(out, option=orjson.OPT_NON_STR_KEYS).decode()
    decoded = text.encode().decode("unicode_escape", errors="ignore") + text
    for value in (
        "小野寺綾香",
        "अनिरुद्ध",
        "يوسف",
        "Phạm Thị",
        "Šťastný",
        "leopold.wexcombe",
        "Osric Fenwold",
        "pdunmore_88",
    ):
        assert value not in text and value not in decoded, value
