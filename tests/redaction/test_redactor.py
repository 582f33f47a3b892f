"""Per-case redaction: propagation, consistent keys, untouched structure, fail-closed."""

from __future__ import annotations

import pickle

import orjson
import pytest

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.propagation import ValueIndex, make_anonymizer
from golden_distill.redaction.pseudonym import key_pseudonym
from golden_distill.redaction.redactor import OPTED_OUT, REDACTION_ERROR, Redactor
from golden_distill.redaction.verify import (
    RESIDUAL_PII,
    UNPARSEABLE,
    ScrubbedField,
    verify_scrubbed,
)

TEST_SECRET = b"test-pseudonym-key-0123456789abcdef-not-for-production"
NAME = "Zoe Quartermaine"
EMAIL = "zoe.q@example.org"
ORDER = "ORD-482913"


@pytest.fixture(autouse=True)
def _builders(make_case, make_step) -> None:
    global case, step
    case, step = make_case, make_step


def crm_case() -> dict:
    return case(
        user_input=f"hi, this is zoe quartermaine about order {ORDER}, mail me",
        steps=[
            step(
                0,
                "crm_get_customer",
                {"customerId": "CUST-77"},
                f'{{"customerId": "CUST-77", "fullName": "{NAME}", "email": "{EMAIL}", '
                '"phone": 4155550132, "address": {"state": "OK"}, "status": "OK"}',
            ),
            step(
                1,
                "erp_refund",
                f'{{"orderId": "{ORDER}", "amount": 120.50, "user_id": 12345}}',
                f'{{"orderId":"{ORDER}","status":"REFUNDED","total":3376.17}}',
                is_mutating=True,
            ),
        ],
        outcome={
            "answer_text": f"Refunded {ORDER}. Thanks Zoe, we wrote to {EMAIL}.",
            "final_state": "REFUNDED",
            "status": "success",
            "handoff": False,
            "handoff_reason": None,
            "low_confidence": False,
            "reward": 1.0,
        },
    )


def dump(row: dict) -> str:
    return orjson.dumps(row, default=str).decode()


def test_values_found_in_a_tool_reply_are_scrubbed_everywhere(redactor: Redactor) -> None:
    result = redactor.redact(crm_case())
    assert result.published, result.reason
    text = dump(result.row)
    for value in (NAME, NAME.lower(), "Zoe", "Quartermaine", EMAIL, "4155550132", ORDER):
        assert value not in text, value
    counts = orjson.loads(result.row["redaction"])
    assert counts["PERSON"] >= 3 and counts["EMAIL_ADDRESS"] >= 2 and counts["KEY_ORDER"] >= 3


def test_keys_are_one_pseudonym_everywhere_and_hashes_recomputed(redactor: Redactor) -> None:
    row = redactor.redact(crm_case()).row
    pseudo = key_pseudonym(ORDER, "order", TEST_SECRET, RedactionConfig().key_fields[0].prefix)
    assert pseudo.startswith("ORD-") and len(pseudo) == len(ORDER)
    for where in (
        row["user_input"],
        row["outcome"]["answer_text"],
        row["steps"][1]["arguments"],
        row["steps"][1]["response"],
    ):
        assert pseudo in where
    for s in row["steps"]:
        assert s["canonical_args_sha256"] == canonical_args_sha256(s["arguments"])
    assert row["tenant_id"] == key_pseudonym("t-acme", "tenant", TEST_SECRET, "t-|tenant-|T-")
    assert row["user_id"] != "u-1001" and row["session_id"] != "s-1"


def test_structure_amounts_statuses_and_names_are_unchanged(redactor: Redactor) -> None:
    before = crm_case()
    after = redactor.redact(before).row
    assert [s["name"] for s in after["steps"]] == [s["name"] for s in before["steps"]]
    assert [s["status"] for s in after["steps"]] == [s["status"] for s in before["steps"]]
    args = after["steps"][1]["arguments"]
    assert '"amount": 120.50' in args  # byte-for-byte, not 120.5
    assert '"total":3376.17' in after["steps"][1]["response"]
    assert after["outcome"]["final_state"] == "REFUNDED"
    resp = orjson.loads(after["steps"][0]["response"])
    assert list(resp) == ["customerId", "fullName", "email", "phone", "address", "status"]
    assert resp["status"] == "OK"  # a status equal to a short personal value is left alone
    assert resp["address"]["state"] != "OK"  # ...but the personal field itself is scrubbed
    assert isinstance(resp["phone"], str) and resp["phone"].startswith("<PHONE_NUMBER_")
    user_id = orjson.loads(args)["user_id"]
    assert isinstance(user_id, int) and len(str(user_id)) == 5 and user_id != 12345
    assert before["user_input"].startswith("hi, this is zoe")  # the input row is not modified


def test_same_input_same_output_and_other_key_other_pseudonyms(redactor: Redactor) -> None:
    assert dump(redactor.redact(crm_case()).row) == dump(redactor.redact(crm_case()).row)
    other = Redactor(RedactionConfig(), PseudonymKey(b"other-key-Mn6Bv1Cx8Zl3Kj9Hg2Fd7Sa4Qw0Er5Ty"))
    a = orjson.loads(redactor.redact(crm_case()).row["steps"][1]["arguments"])["orderId"]
    b = orjson.loads(other.redact(crm_case()).row["steps"][1]["arguments"])["orderId"]
    assert a != b


def test_redactor_pickles_and_behaves_the_same(redactor: Redactor) -> None:
    clone = pickle.loads(pickle.dumps(redactor))
    assert dump(clone.redact(crm_case()).row) == dump(redactor.redact(crm_case()).row)
    assert clone.opt_out == redactor.opt_out


def test_opted_out_tenant_never_passes(redactor: Redactor) -> None:
    result = redactor.redact(case(tenant_id="t-optout", user_input="hello"))
    assert result.row is None and result.reason == OPTED_OUT


def test_scrubbing_error_quarantines_instead_of_publishing_raw(
    config: RedactionConfig, key: PseudonymKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = Redactor(config, key)

    def boom(texts: list[str], threshold: float, *_: object) -> dict:
        raise RuntimeError(f"analyzer exploded on {texts[0]}")

    monkeypatch.setattr(broken.analyzer, "analyze_many", boom)
    result = broken.redact(case(user_input="call +1 415-555-0132"))
    assert result.row is None and result.reason == REDACTION_ERROR
    assert result.detail == "RuntimeError"  # the message (with text) is never kept
    batch = broken.redact_many(
        [case(case_id="c1", user_input="a@b.io"), case(case_id="c2", user_input="hello there")]
    )
    assert all(r.row is None and r.reason == REDACTION_ERROR for r in batch)


def test_residual_finding_at_verification_quarantines(key: PseudonymKey) -> None:
    # detection ignores phones (threshold above their score); verification still sees them
    lax = Redactor(
        RedactionConfig(score_threshold=0.95, verify_threshold=0.3, unsafe_allow_weakened=True), key
    )
    result = lax.redact(case(user_input="my phone number is 001-711-950-3892x828"))
    assert result.row is None and result.reason == RESIDUAL_PII
    assert result.entity_types == ("PHONE_NUMBER",)


def test_a_field_that_no_longer_parses_fails_verification(key: PseudonymKey) -> None:
    prop = ValueIndex(key.secret).build(make_anonymizer())
    verdict = verify_scrubbed(
        [ScrubbedField('{"a": 1', True)], prop, lambda texts: {t: [] for t in texts}, 0.4
    )
    assert verdict.reason == UNPARSEABLE


def test_chinese_case(redactor: Redactor) -> None:
    row = case(
        user_input="我是华为公司的李娜，手机13812345678，身份证110105194912310021",
        steps=[
            step(
                0,
                "hr_get_employee",
                {"employeeId": "EMP-1"},
                {"fullName": "李娜", "idNumber": "110105194912310021"},
            )
        ],
        outcome={
            "answer_text": "李娜您好，已处理。",
            "final_state": "DONE",
            "status": "success",
            "handoff": False,
            "handoff_reason": None,
            "low_confidence": False,
            "reward": None,
        },
    )
    result = redactor.redact(row)
    assert result.published, result.reason
    text = dump(result.row)
    for value in ("李娜", "13812345678", "110105194912310021"):
        assert value not in text
    assert "华为公司" in result.row["user_input"]


def test_names_spelled_out_in_an_email_address_are_names(redactor: Redactor) -> None:
    row = case(
        steps=[step(0, "find_user_id_by_email", {"email": "amelia.ortiz7310@example.com"}, '"u"')],
        outcome={
            "answer_text": "Thank you, Amelia! Found your account, Ms Ortiz.",
            "final_state": None,
            "status": "success",
            "handoff": False,
            "handoff_reason": None,
            "low_confidence": False,
            "reward": None,
        },
    )
    answer = redactor.redact(row).row["outcome"]["answer_text"]
    assert "Amelia" not in answer and "Ortiz" not in answer
    assert answer.startswith("Thank you, <PERSON_")
