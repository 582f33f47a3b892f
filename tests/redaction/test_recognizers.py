"""The curated recognizers, including Chinese fixtures next to Han characters and misfire guards."""

from __future__ import annotations

import pytest

from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.recognizers.base import luhn_ok
from golden_distill.redaction.recognizers.cn_resident_id import cn_id_checksum_ok


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return TextAnalyzer(RedactionConfig())


def found(analyzer: TextAnalyzer, text: str) -> set[tuple[str, str]]:
    return {(f.entity_type, text[f.start : f.end]) for f in analyzer.analyze(text, 0.3)}


def _cn_id(body17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(body17, weights, strict=True))
    return body17 + "10X98765432"[total % 11]


def _luhn(body: str) -> str:
    for d in "0123456789":
        if luhn_ok(body + d):
            return body + d
    raise AssertionError


VALID_ID = _cn_id("11010519491231002")
BAD_ID = VALID_ID[:-1] + ("1" if VALID_ID[-1] != "1" else "2")
CARD = _luhn("622202123456789012")  # 19-digit UnionPay
BAD_CARD = CARD[:-1] + str((int(CARD[-1]) + 1) % 10)


def test_checksums_of_fixtures() -> None:
    assert cn_id_checksum_ok(VALID_ID) and not cn_id_checksum_ok(BAD_ID)
    assert luhn_ok(CARD) and not luhn_ok(BAD_CARD)


def test_cn_resident_id_next_to_chinese(analyzer: TextAnalyzer) -> None:
    assert ("CN_RESIDENT_ID", VALID_ID) in found(analyzer, f"我的身份证号{VALID_ID}请核对")


def test_cn_resident_id_with_bad_checksum_or_date_is_rejected(analyzer: TextAnalyzer) -> None:
    assert not any(e == "CN_RESIDENT_ID" for e, _ in found(analyzer, f"身份证{BAD_ID}。"))
    bad_date = _cn_id("11010519491331002")  # month 13
    assert not any(e == "CN_RESIDENT_ID" for e, _ in found(analyzer, f"身份证{bad_date}。"))


@pytest.mark.parametrize("mobile", ["13812345678", "+86 138 1234 5678", "138-1234-5678"])
def test_cn_mobile_next_to_chinese(analyzer: TextAnalyzer, mobile: str) -> None:
    assert ("CN_MOBILE", mobile) in found(analyzer, f"请拨打{mobile}联系我")


def test_cn_mobile_not_inside_longer_digit_runs(analyzer: TextAnalyzer) -> None:
    assert not any(e == "CN_MOBILE" for e, _ in found(analyzer, "流水号2138123456789号"))


def test_bank_card_luhn_next_to_chinese(analyzer: TextAnalyzer) -> None:
    assert ("BANK_CARD", CARD) in found(analyzer, f"工资卡换成{CARD}，谢谢")
    assert not any(e == "BANK_CARD" for e, _ in found(analyzer, f"工资卡换成{BAD_CARD}，谢谢"))


def test_bank_card_defers_to_credit_card(analyzer: TextAnalyzer) -> None:
    hits = found(analyzer, "pay with 4111 1111 1111 1111 today")
    assert ("CREDIT_CARD", "4111 1111 1111 1111") in hits
    assert not any(e == "BANK_CARD" for e, _ in hits)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "key sk-abcdefghijklmnopqrstuvwxyz0123456789 rejected",
            "sk-abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        ("接口密钥AKIAIOSFODNN7EXAMPLE一直被拒绝", "AKIAIOSFODNN7EXAMPLE"),
        ("token ghp_" + "A1b2" * 9 + " leaked", "ghp_" + "A1b2" * 9),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def", "eyJhbGciOiJIUzI1NiJ9.abc.def"),
        ("I already tried password=hunter2x!", "hunter2x!"),
        ("我试过密码：Qw3rty99了", "Qw3rty99"),
    ],
)
def test_secrets(analyzer: TextAnalyzer, text: str, secret: str) -> None:
    assert ("SECRET", secret) in found(analyzer, text)


def test_pem_private_key_block(analyzer: TextAnalyzer) -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    assert ("SECRET", pem) in found(analyzer, f"config:\n{pem}\nend")


@pytest.mark.parametrize(
    "text",
    [
        "total 3376.17 USD",  # an amount
        "server 10.20.30.40 answered",  # an IP (found as IP, never as phone)
        "item id 1008292230 is out of stock",  # a bare 10-digit id
        "order ORD-123456 shipped",
    ],
)
def test_no_phone_misfires(analyzer: TextAnalyzer, text: str) -> None:
    assert not any(e == "PHONE_NUMBER" for e, _ in found(analyzer, text))


def test_phone_shapes_and_context(analyzer: TextAnalyzer) -> None:
    assert ("PHONE_NUMBER", "001-711-950-3892x828") in found(
        analyzer, "my phone number is 001-711-950-3892x828, thanks"
    )
    assert ("PHONE_NUMBER", "6119914521") in found(analyzer, "my phone number is 6119914521")


def test_email_next_to_chinese_and_offline(analyzer: TextAnalyzer) -> None:
    hits = found(analyzer, "邮箱 zhang.wei@example.cn 谢谢")
    assert ("EMAIL_ADDRESS", "zhang.wei@example.cn") in hits


def test_introduced_names(analyzer: TextAnalyzer) -> None:
    assert ("PERSON", "Mei Brown") in found(analyzer, "Hi, I'm Mei Brown, and my flight")
    assert ("PERSON", "张伟") in found(analyzer, "我叫张伟，电话多少")
    assert ("PERSON", "李娜") in found(analyzer, "我是华为公司的李娜。")
    assert not any(e == "PERSON" for e, _ in found(analyzer, "I'm Gold member"))


def test_addresses(analyzer: TextAnalyzer) -> None:
    text = "change it to 7188 Rosales View, Farrellside, NC 88054. thanks"
    assert ("ADDRESS", "7188 Rosales View, Farrellside, NC 88054") in found(analyzer, text)
    zh = "寄到黑龙江省东莞市永川马鞍山路D座 389068，谢谢"
    assert ("ADDRESS", "黑龙江省东莞市永川马鞍山路D座 389068") in found(analyzer, zh)


def test_strings_without_candidates_skip_presidio(analyzer: TextAnalyzer) -> None:
    assert analyzer.candidate_entities("PENDING") == []
    assert analyzer.candidate_entities("the order shipped yesterday") == []
    assert "EMAIL_ADDRESS" in analyzer.candidate_entities("a@b.co")
