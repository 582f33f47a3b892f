"""Numbers that a cue word says are personal: phone numbers in any country's format, bank
account numbers (beside a routing number, sort code or BIC too), US EINs, medical record
numbers, dates of birth in prose.

No maintained library recognises these by shape alone: ``phonenumbers`` (``phone.py``) needs a
region or a ``+``, and a Brazilian "(11) 91234-5678" or a Chinese "010-6552 9988 转 803" is
valid in one region of hundreds; an account number is any digit run. So a cue in the user's
language comes first ("celular", "Handy", "电话", "account", "born"), then a number of the right
size. Written here because no maintained recognizer covers them; each row is declarative.
"""

from __future__ import annotations

from golden_distill.redaction.recognizers.base import (
    CuedPattern,
    DigitKeywords,
    RecognizerSpec,
    digit_count,
)
from golden_distill.redaction.recognizers.pattern_table import PatternTable

_PHONE_CUES = (
    r"(?i:\b(?:phone|tel|telephone|mobile|cell(?:phone)?|call me|call us|text me|sms|whatsapp"
    r"|fax|handy|telefon|telefono|teléfono|telefone|celular|móvil|movil|portable|numéro"
    r"|cellulare|ruf|liga|ligar|contact(?:o)?)(?![A-Za-z])|电话|手机|拨打|致电|联系|電話|携帯|연락처|전화"
    r"|هاتف|फ़ोन|फोन)"
)
#: a number after a phone cue: optional +/00, digits with phone separators, an extension (the
#: cue may be glued to it by underscores, as in a final-state label "SMS_SENT_0771...")
_PHONE = (
    rf"(?<={_PHONE_CUES}[^0-9\n]{{0,25}})(?<![0-9A-Za-z#])(?:\+|00)?\(?\d[\d\s().\-/]{{5,20}}\d"
    r"(?:\s*(?:转|分机|內線|内线|ext\.?|x|#)\s*\d{1,6})?(?![0-9])"
)
_ACCOUNT = (
    r"(?<=(?i:\b(?:account|acct|a/c|konto|kontonummer|cuenta|compte|conto|rekening)\b"
    r"(?:\s*(?:no\.?|number|nr\.?|num\.?|#))?)[\s:#.=-]{0,4})\d[\d -]{4,18}\d(?![0-9])"
)
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE = (
    r"(?i:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?(?: of)? {_MONTH},? \d{{4}}"
    rf"|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}})"
)
_BIRTH_CUES = (
    r"(?i:\bborn|\bbirth ?(?:day|date)|date of birth|\bd\.?o\.?b\b\.?|\bgeboren|\bnée?\b"
    r"|\bnacid[oa]|\bnat[oa] il|出生|生年月日)"
)

#: The pre-filter: every cue above, as plain words (Aho-Corasick over folded text).
CUE_WORDS = (
    "phone", "tel", "mobile", "cell", "call", "text", "sms", "whatsapp", "fax", "handy",
    "telefon", "telefone", "teléfono", "celular", "móvil", "movil", "portable", "numéro",
    "cellulare", "ruf", "liga", "contact", "account", "acct", "a/c", "konto", "cuenta",
    "compte", "conto", "rekening", "ein", "employer", "mrn", "medical", "patient", "born",
    "birth", "dob", "d.o.b", "geboren", "née", "nacid", "nata", "nato", "电话", "手机", "拨打",
    "致电", "联系", "電話", "携帯", "연락처", "전화", "هاتف", "फ़ोन", "फोन", "出生", "生年月日",
)  # fmt: skip

ROWS = [
    CuedPattern("phone_after_cue", _PHONE, 0.6, "PHONE_NUMBER", digit_count(7, 15)),
    CuedPattern("account_after_cue", _ACCOUNT, 0.6, "ACCOUNT", digit_count(6, 18)),
    CuedPattern(
        "us_ein",
        r"(?<=(?i:\bF?EIN|employer identification(?: number)?)[\s:#]{0,3})\d{2}-?\d{7}(?![0-9])",
        0.6,
        "US_EIN",
    ),
    CuedPattern(
        "medical_record",
        r"(?<=(?i:\bMRN|medical record(?: number| no\.?)?|patient id)[\s:#]{0,3})"
        r"[A-Za-z]{0,3}-?\d[\d-]{4,14}(?![0-9A-Za-z])",
        0.6,
        "MEDICAL_RECORD",
    ),
    CuedPattern(
        "date_of_birth", rf"(?<={_BIRTH_CUES}[^0-9\n.,;!?]{{0,15}}){_DATE}", 0.6, "DATE_OF_BIRTH"
    ),
]

SPEC = RecognizerSpec(
    name="cued_numbers",
    entities=tuple(dict.fromkeys(row.entity for row in ROWS)),
    prefilter=DigitKeywords(*CUE_WORDS),
    build=lambda cfg: PatternTable("CuedNumbersRecognizer", ROWS),
)
