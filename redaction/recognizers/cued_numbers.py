"""Numbers that a cue word says are personal: phone numbers in any country's format, bank
account numbers (after an account word, or beside a written routing number, sort code or BIC),
US EINs, medical record numbers, US driving licences, UK driving licences written spaced, UK
National Insurance numbers in any case and spacing, dates of birth in prose.

No maintained library recognises these by shape alone: ``phonenumbers`` (``phone.py``) needs a
region or a ``+``, and a Brazilian "(11) 91234-5678" or a Chinese "010-6552 9988 转 803" is
valid in one region of hundreds; an account number, an EIN or a licence is any digit run;
Presidio's NINO recognizer skips the example prefix ``QQ`` and its licence recognizers take no
spaced forms. So a cue in the user's language comes first ("celular", "Handy", "电话",
"account", "born", "EIN", "licence", "NINO"), then a value of the right size. Written here
because no maintained recognizer covers them (python-stdnum, which validates some of these
formats, is not a dependency); each row is declarative and runs only on texts holding one of
its cue words.
"""

from __future__ import annotations

from golden_distill.redaction.recognizers.base import (
    CuedPattern,
    DigitKeywords,
    RecognizerSpec,
    digit_count,
)
from golden_distill.redaction.recognizers.date_formats import DATE
from golden_distill.redaction.recognizers.pattern_table import PatternTable, cue_words

_PRONOUNS = ("me", "us", "you", "him", "her", "them")
#: "DL" as a whole word before its number: what can follow it (``_GAP``'s first characters)
_DL = (*(f"dl{c}" for c in " \t\n#:=-)"), "d/l")
_PHONE_CUES = (
    r"(?i:\b(?:phone|tel|telephone|mobile|cell(?:phone)?|call me|call us|text me|sms|whatsapp"
    r"|callback|call back|call-back|dial(?:l?ed)?|voicemail|msisdn|my number"
    rf"|(?:call|ring|reach|text|phone) (?:{'|'.join(_PRONOUNS)})"
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
    r"(?<=(?i:\b(?:account|acct|a/c|konto|kontonummer|cuenta|compte|conto|rekening|checking"
    r"|chequing|savings)\b"
    r"(?:\s*(?:no\.?|number|nr\.?|num\.?|#))?(?:\s+is)?)[\s:#.=-]{0,4})"
    r"(?:[A-Z]{2,5}[-_]?)?\d[\d -]{4,18}\d(?![0-9])"
)
#: A bank's own code written out (an ABA routing number, a BIC/SWIFT code, a UK sort code)
#: says the digit run beside it (60 characters after, 40 before, same line) is an account
#: number; the code itself, a bank's public id, is left alone.
_BANK_CODE = (
    r"(?:(?i:\brouting(?: number| no\.?| #)?|\baba)[\s:#]{0,3}\d{9}(?![0-9])"
    r"|(?i:\bbic|\bswift(?: code)?)[\s:#]{0,3}[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?(?![A-Za-z0-9])"
    r"|(?i:sort[- ]code)[\s:#]{0,3}\d{2}[- ]?\d{2}[- ]?\d{2}(?![0-9]))"
)
_BANK_CODE_WORDS = ("routing", "aba", "bic", "swift", "sort code", "sort-code")
_RUN = r"(?<![0-9A-Za-z-])\d{6,17}(?![0-9-])"
_BESIDE_BANK_CODE = rf"(?<={_BANK_CODE}[^\n]{{0,60}}){_RUN}|{_RUN}(?=[^\n]{{0,40}}{_BANK_CODE})"
#: Between a cue and its value: filler words and punctuation ("EIN is", "licence no.:").
_GAP = r"(?:\s*(?:is|was|number|no\.?|nr\.?|num\.?|#|:|=|-|\)))*\s*"
_BIRTH_CUES = (
    r"(?i:\bborn|\bbirth ?(?:day|date)|date of birth|\bd\.?o\.?b\b\.?|\bgeboren|\bnée?\b"
    r"|\bnacid[oa]|fecha de nacimiento|data de nascimento|\bnat[oa]|date de naissance"
    r"|geburtsdatum|geboortedatum|出生|生年月日|誕生日)"
)

PHONE_WORDS = (
    "phone", "tel", "mobile", "cell", "call", "sms", "whatsapp", "fax", "handy", "dial",
    "voicemail", "msisdn", "my number", "telefon", "telefone",
    *(f"{verb} {who}" for verb in ("text", "reach", "ring") for who in _PRONOUNS),
    "teléfono", "celular", "móvil", "movil", "portable", "numéro", "cellulare", "ruf", "liga",
    "contact", "电话", "手机", "拨打", "致电", "联系", "電話", "携帯", "연락처", "전화", "هاتف",
    "फ़ोन", "फोन",
)  # fmt: skip
BIRTH_WORDS = (
    "born", "birth", "dob", "d.o.b", "geboren", "né", "nacid", "nata", "nato", "nacimiento",
    "nascimento", "naissance", "geburtsdatum", "geboortedatum", "出生", "生年月日", "誕生日",
)  # fmt: skip

ROWS = [
    CuedPattern("phone_after_cue", _PHONE, 0.6, "PHONE_NUMBER", digit_count(7, 15), PHONE_WORDS),
    CuedPattern("account_after_cue", _ACCOUNT, 0.6, "ACCOUNT", digit_count(6, 18),
                ("account", "acct", "a/c", "konto", "cuenta", "compte", "conto", "rekening",
                 "checking", "chequing", "savings")),
    CuedPattern("account_beside_bank_code", _BESIDE_BANK_CODE, 0.5, "ACCOUNT",
                digit_count(6, 17), _BANK_CODE_WORDS),
    CuedPattern("us_ein",
                rf"(?<=(?i:\bF?EIN|employer id(?:entification)?(?: number)?|federal tax id){_GAP})"
                r"\d{2}-?\d{7}(?![0-9])", 0.6, "US_EIN",
                cues=("ein", "employer id", "federal tax")),
    CuedPattern("medical_record",
                r"(?<=(?i:\bMRN|medical record(?: number| no\.?)?|patient id"
                rf"|chart (?:number|no\.?)){_GAP})[A-Za-z]{{0,3}}-?\d[\d-]{{4,14}}(?![0-9A-Za-z])",
                0.6, "MEDICAL_RECORD", cues=("mrn", "medical record", "patient id", "chart")),
    CuedPattern("driver_licence",
                rf"(?<=(?i:driver'?s?\s+licen[cs]e|driving\s+licen[cs]e|\bD/?L\b|licen[cs]e){_GAP})"
                r"(?i:[A-Z]{0,3}[- ]?\d(?:[- ]?\d){3,13}[A-Z]?)(?![0-9A-Za-z])",
                0.6, "DRIVER_LICENSE", digit_count(5, 15), ("licence", "license", *_DL)),
    CuedPattern("uk_driving_licence_spaced",
                r"(?i:(?<![0-9A-Za-z])[A-Z9]{5} ?\d{6} ?[A-Z9]{2}\d[A-Z]{2}(?: ?\d{2})?"
                r"(?![0-9A-Za-z]))",
                0.6, "UK_DRIVING_LICENCE", cues=("licence", "license", "dvla", *_DL)),
    CuedPattern("uk_nino_after_cue",
                rf"(?<=(?i:\bNINO|\bNI (?:number|no\.?)|national insurance(?: number| no\.?)?)"
                rf"{_GAP})(?i:[A-Z]{{2}}\s?\d{{2}}\s?\d{{2}}\s?\d{{2}}\s?[A-D])(?![0-9A-Za-z])",
                0.6, "UK_NINO", cues=("nino", "ni n", "national insurance")),
    CuedPattern("date_of_birth", rf"(?<={_BIRTH_CUES}[^0-9\n.,;!?]{{0,40}}){DATE}", 0.6,
                "DATE_OF_BIRTH", cues=BIRTH_WORDS),
    CuedPattern("date_then_birth_cue", rf"{DATE}(?=\s?(?:生まれ|出生|生))", 0.6, "DATE_OF_BIRTH",
                cues=("生",)),
]  # fmt: skip

SPEC = RecognizerSpec(
    name="cued_numbers",
    entities=tuple(dict.fromkeys(row.entity for row in ROWS)),
    prefilter=DigitKeywords(*cue_words(ROWS)),
    build=lambda cfg: PatternTable("CuedNumbersRecognizer", ROWS),
)
