"""Personal values to plant: realistic, valid (checksums), English and Chinese, fast to draw.

Faker is slow per call and its output depends on call order, so a ``PiiPools`` is built once per
corpus from seeded Faker instances (en_US and zh_CN) and records then *draw* from the pools with
their own seeded ``random.Random``. Values Faker does not make with the checksums real validators
check (CN resident ids, UnionPay bank cards, IBANs, CN mobiles, API keys) are generated here
directly from the record's random stream, so every one is fresh and valid.

Entity type names follow the redaction package's vocabulary (``PERSON``, ``EMAIL_ADDRESS``...).
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from faker import Faker

PERSON = "PERSON"
EMAIL = "EMAIL_ADDRESS"
PHONE = "PHONE_NUMBER"
ADDRESS = "ADDRESS"
CREDIT_CARD = "CREDIT_CARD"
IBAN = "IBAN_CODE"
CN_MOBILE = "CN_MOBILE"
CN_RESIDENT_ID = "CN_RESIDENT_ID"
BANK_CARD = "BANK_CARD"
API_KEY = "API_KEY"
BEARER_TOKEN = "BEARER_TOKEN"
PASSWORD = "PASSWORD"

ENTITY_TYPES: tuple[str, ...] = (
    PERSON,
    EMAIL,
    PHONE,
    ADDRESS,
    CREDIT_CARD,
    IBAN,
    CN_MOBILE,
    CN_RESIDENT_ID,
    BANK_CARD,
    API_KEY,
    BEARER_TOKEN,
    PASSWORD,
)

T = TypeVar("T")
_ALNUM = string.ascii_letters + string.digits
_UPPER_ALNUM = string.ascii_uppercase + string.digits
_B64URL = string.ascii_letters + string.digits + "-_"
_CN_MOBILE_PREFIXES = (
    "134",
    "135",
    "136",
    "138",
    "139",
    "150",
    "151",
    "158",
    "159",
    "182",
    "186",
    "187",
    "188",
    "130",
    "131",
    "132",
    "155",
    "156",
    "133",
    "153",
    "180",
    "181",
    "189",
    "177",
    "199",
)
_CN_AREA_CODES = (
    "110101",
    "110105",
    "310104",
    "310115",
    "440103",
    "440305",
    "330106",
    "320102",
    "510104",
    "420102",
    "610113",
    "370202",
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def pick(rng: random.Random, seq: Sequence[T]) -> T:
    """``rng.choice`` at half the cost (one float draw): it is called millions of times."""
    return seq[int(rng.random() * len(seq))]


def luhn_check_digit(body: str) -> str:
    """The digit that makes ``body + digit`` pass the Luhn check (cards, UnionPay bank cards)."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def luhn_valid(number: str) -> bool:
    digits = [c for c in number if c.isdigit()]
    return len(digits) > 1 and luhn_check_digit("".join(digits[:-1])) == digits[-1]


def cn_id_check_char(body17: str) -> str:
    """GB 11643 check character of an 18-character resident identity number."""
    return _ID_CHECK[sum(int(c) * w for c, w in zip(body17, _ID_WEIGHTS, strict=True)) % 11]


def cn_id_valid(value: str) -> bool:
    return len(value) == 18 and value[:17].isdigit() and cn_id_check_char(value[:17]) == value[17]


def iban_check_digits(country: str, bban: str) -> str:
    rearranged = bban + country + "00"
    numeric = "".join(str(int(c, 36)) for c in rearranged)
    return f"{98 - int(numeric) % 97:02d}"


def iban_valid(value: str) -> bool:
    v = value.replace(" ", "")
    numeric = "".join(str(int(c, 36)) for c in v[4:] + v[:4])
    return int(numeric) % 97 == 1


@dataclass(frozen=True, slots=True)
class Persona:
    """One person's values, drawn together so a name, its e-mail and phone travel as a set."""

    name: str
    email: str
    phone: str
    phone_type: str
    address: str


class PiiPools:
    """Pre-generated Faker values per locale plus checksum-valid generators (see module doc)."""

    def __init__(self, seed: int, size: int = 1024) -> None:
        en = Faker("en_US")
        en.seed_instance(seed)
        zh = Faker("zh_CN")
        zh.seed_instance(seed + 7919)
        self.en_names = [en.name() for _ in range(size)]
        self.en_emails = [en.email() for _ in range(size)]
        self.en_phones = [en.phone_number() for _ in range(size)]
        self.en_addresses = [
            f"{en.street_address()}, {en.city()}, {en.state_abbr()} {en.zipcode()}"
            for _ in range(size)
        ]
        self.en_cards = [en.credit_card_number() for _ in range(size)]
        self.zh_names = [zh.name() for _ in range(size)]
        self.zh_emails = [zh.email() for _ in range(size)]
        self.zh_addresses = [zh.address().replace("\n", " ") for _ in range(size)]
        self.en_companies = [en.company() for _ in range(size // 4)]
        self.zh_companies = [zh.company() for _ in range(size // 4)]
        # Values that are costly to make per record come from seeded pools as well.
        gen = random.Random(seed * 31 + 17)
        self.api_keys = [self.api_key(gen) for _ in range(size)]
        self.tokens = [self.bearer_token(gen) for _ in range(size)]
        self.passwords = [self.password(gen) for _ in range(size)]
        self.ibans = [self.iban(gen) for _ in range(size)]
        self.bank_cards = [self.bank_card(gen) for _ in range(size)]
        self.cn_ids = [self.cn_resident_id(gen) for _ in range(size)]

    # -- personas -----------------------------------------------------------------------------
    def persona(self, rng: random.Random, lang: str) -> Persona:
        if lang == "zh":
            return Persona(
                name=pick(rng, self.zh_names),
                email=pick(rng, self.zh_emails),
                phone=self.cn_mobile(rng),
                phone_type=CN_MOBILE,
                address=pick(rng, self.zh_addresses),
            )
        return Persona(
            name=pick(rng, self.en_names),
            email=pick(rng, self.en_emails),
            phone=pick(rng, self.en_phones),
            phone_type=PHONE,
            address=pick(rng, self.en_addresses),
        )

    def company(self, rng: random.Random, lang: str) -> str:
        return pick(rng, self.zh_companies if lang == "zh" else self.en_companies)

    # -- generated, checksum-valid ------------------------------------------------------------
    @staticmethod
    def cn_mobile(rng: random.Random) -> str:
        return f"{pick(rng, _CN_MOBILE_PREFIXES)}{rng.getrandbits(40) % 10**8:08d}"

    @staticmethod
    def cn_resident_id(rng: random.Random) -> str:
        year = rng.randint(1955, 2004)
        month = rng.randint(1, 12)
        day = rng.randint(1, 28)
        seq = rng.randint(0, 999)
        body = f"{rng.choice(_CN_AREA_CODES)}{year:04d}{month:02d}{day:02d}{seq:03d}"
        return body + cn_id_check_char(body)

    @staticmethod
    def bank_card(rng: random.Random) -> str:
        """A UnionPay-style debit card number (62 prefix, 19 digits, Luhn-valid)."""
        body = (
            "62"
            + rng.choice(("2202", "2848", "1700", "1483", "2588"))
            + "".join(rng.choices(string.digits, k=12))
        )
        return body + luhn_check_digit(body)

    def credit_card(self, rng: random.Random) -> str:
        return pick(rng, self.en_cards)

    @staticmethod
    def iban(rng: random.Random) -> str:
        if rng.random() < 0.5:
            country, bban = "DE", "".join(rng.choices(string.digits, k=18))
        else:
            bank = "".join(rng.choices(string.ascii_uppercase, k=4))
            country, bban = "NL", bank + "".join(rng.choices(string.digits, k=10))
        return country + iban_check_digits(country, bban) + bban

    @staticmethod
    def api_key(rng: random.Random) -> str:
        kind = rng.randrange(3)
        if kind == 0:
            return "sk-" + "".join(rng.choices(_ALNUM, k=48))
        if kind == 1:
            return "AKIA" + "".join(rng.choices(_UPPER_ALNUM, k=16))
        return "ghp_" + "".join(rng.choices(_ALNUM, k=36))

    @staticmethod
    def bearer_token(rng: random.Random) -> str:
        """A JWT-shaped token; planted with its ``Bearer `` prefix in headers and messages."""
        head = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        body = "eyJ" + "".join(rng.choices(_B64URL, k=40))
        sig = "".join(rng.choices(_B64URL, k=43))
        return f"{head}.{body}.{sig}"

    @staticmethod
    def password(rng: random.Random) -> str:
        return "".join(rng.choices(_ALNUM, k=rng.randint(10, 14))) + rng.choice("!#%&*")


@lru_cache(maxsize=4)
def pools_for(seed: int) -> PiiPools:
    """The pools of a seed, built once per process (they are immutable after construction)."""
    return PiiPools(seed)
