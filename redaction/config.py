"""Redaction (section `redaction:`): key rules, pseudonymised keys, recognizers, thresholds.

Secrets are never here: the pseudonym key is resolved apart from config (see ``keys.py``); this
section only names *where* to look for it (a Prefect Secret block name, a local key file for the
demo). Every field is documented where it is declared (dlt style) and unknown keys are errors.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from golden_distill.datasets.config_model import StrictModel
from golden_distill.redaction.recognizers.registry import FLOOR, REGISTERED, resolve

#: Recognizers this package knows, in the order they run: ``recognizers/registry.py``.
KNOWN_RECOGNIZERS: tuple[str, ...] = REGISTERED
#: Every recognizer the verifier always runs, whatever ``recognizers`` says.
FLOOR_RECOGNIZERS: tuple[str, ...] = FLOOR


class KeyField(StrictModel):
    """One kind of primary key (order, user, tenant...) and where its values live."""

    key_type: str = Field(
        description="Namespace of the pseudonym (`order`, `user`...): the same value under two "
        "key types gets two unrelated pseudonyms.",
        pattern=r"^[a-z][a-z0-9_]*$",
    )
    fields: list[str] = Field(
        default_factory=list,
        description="Key-name patterns whose values are keys of this type: a bare name matches "
        "the last key (`orderId`, `*_order_id`), a dotted pattern matches the path's tail "
        "(`payment_methods.*.id`). Case-insensitive shell globs; list items take their list's key.",
    )
    columns: list[str] = Field(
        default_factory=list,
        description="Top-level case columns holding a key of this type (`tenant_id`, `user_id`).",
    )
    prefix: str | None = Field(
        None,
        description="Regex of a leading part kept verbatim (`#W|ORD-`), so format validators "
        "still accept the pseudonym. Without it every letter and digit is replaced.",
    )
    text_pattern: str | None = Field(
        None,
        description="Optional regex finding values of this key type in free text even when no "
        "structured field of the case holds them (e.g. `#W\\d{7}`). Leave empty when the shape "
        "is ambiguous (six-letter reservation codes look like flight numbers).",
    )

    @field_validator("prefix", "text_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


def _default_key_rules() -> dict[str, str]:
    return {
        "*email*": "EMAIL_ADDRESS",
        "*phone*": "PHONE_NUMBER",
        "*mobile*": "PHONE_NUMBER",
        "fullName": "PERSON",
        "full_name": "PERSON",
        "first_name": "PERSON",
        "firstName": "PERSON",
        "last_name": "PERSON",
        "lastName": "PERSON",
        "customerName": "PERSON",
        "customer_name": "PERSON",
        "contactName": "PERSON",
        "accountHolder": "PERSON",
        "requestedBy": "PERSON",
        "recipient": "PERSON",
        "aliases": "PERSON",
        "*address": "ADDRESS",
        "*address.*": "ADDRESS",
        "address1": "ADDRESS",
        "address2": "ADDRESS",
        "street": "ADDRESS",
        "lat": "LOCATION",
        "latitude": "LOCATION",
        "lng": "LOCATION",
        "lon": "LOCATION",
        "longitude": "LOCATION",
        "dob": "DATE_OF_BIRTH",
        "date_of_birth": "DATE_OF_BIRTH",
        "birthDate": "DATE_OF_BIRTH",
        "idCard": "ID_CARD",
        "id_card": "ID_CARD",
        "idNumber": "ID_CARD",
        "iban": "IBAN_CODE",
        "card": "CREDIT_CARD",
        "cardNumber": "CREDIT_CARD",
        "card_number": "CREDIT_CARD",
        "*cardNumber": "CREDIT_CARD",
        "bankCard": "BANK_CARD",
        "bank_card": "BANK_CARD",
    }


def _default_sensitive_keys() -> dict[str, str]:
    """Key names that are evidence by themselves: the value is personal or secret whatever its
    shape. Generous on purpose; PERSON entries apply only to name-shaped values outside
    tool/product/model contexts (``key_rules.person_context_ok``)."""
    return {
        "*passw*": "SECRET",
        "pwd": "SECRET",
        "*secret*": "SECRET",
        "*token": "SECRET",
        "*api_key*": "SECRET",
        "*apikey*": "SECRET",
        "*api-key*": "SECRET",
        "*credential*": "SECRET",
        "authorization": "SECRET",
        "auth": "SECRET",
        "*private_key*": "SECRET",
        "*privatekey*": "SECRET",
        "dsn": "SECRET",
        "*connection_string*": "SECRET",
        "pin": "SECRET",
        "cvv": "SECRET",
        "cvc": "SECRET",
        "*ssn*": "US_SSN",
        "*social_security*": "US_SSN",
        "*passport*": "PASSPORT",
        "*birthday*": "DATE_OF_BIRTH",
        "*birth*": "DATE_OF_BIRTH",
        "*dob": "DATE_OF_BIRTH",
        "tel": "PHONE_NUMBER",
        "*telephone*": "PHONE_NUMBER",
        "fax": "PHONE_NUMBER",
        "msisdn": "PHONE_NUMBER",
        "mail": "EMAIL_ADDRESS",
        "*_mail": "EMAIL_ADDRESS",
        "e-mail": "EMAIL_ADDRESS",
        "username": "USERNAME",
        "user_name": "USERNAME",
        "login": "USERNAME",
        "name": "PERSON",
        "*_name": "PERSON",
        "*name": "PERSON",
        "contact": "PERSON",
        "contact_person": "PERSON",
        "holder*": "PERSON",
        "*holder": "PERSON",
        "home": "ADDRESS",
        "*street*": "ADDRESS",
        "account": "ACCOUNT",
        "account_no": "ACCOUNT",
        "accountno": "ACCOUNT",
        "*account_number*": "ACCOUNT",
        "*bank_account*": "ACCOUNT",
        "*bankaccount*": "ACCOUNT",
        "*license*": "ID_CARD",
        "*licence*": "ID_CARD",
        "*national_id*": "ID_CARD",
        "*nationalid*": "ID_CARD",
        "*tax_id*": "ID_CARD",
        "*taxid*": "ID_CARD",
        "cc": "CREDIT_CARD",
        "*card_no*": "CREDIT_CARD",
    }


def _default_key_fields() -> list[KeyField]:
    return [
        KeyField(
            key_type="order",
            fields=["orderId", "order_id", "orders", "*OrderId", "*_order_id"],
            prefix=r"#W|ORD-|SO-|PO-",
            text_pattern=r"#W\d{7}|ORD-\d{3,}",
        ),
        KeyField(
            key_type="user",
            fields=["userId", "user_id", "customerId", "customer_id"],
            columns=["user_id"],
        ),
        KeyField(
            key_type="tenant",
            fields=["tenantId", "tenant_id"],
            columns=["tenant_id"],
            prefix=r"t-|tenant-|T-",
        ),
        KeyField(
            key_type="account",
            fields=["accountId", "account_id", "accountNumber", "account_number"],
            prefix=r"ACC-|acct_",
        ),
        KeyField(
            key_type="reservation",
            fields=["reservationId", "reservation_id", "reservations"],
        ),
        KeyField(
            key_type="payment_method",
            fields=[
                "paymentMethodId",
                "payment_method_id",
                "payment_methods.*.id",
                "*payment_method_id",
            ],
            prefix=r"credit_card_|paypal_|gift_card_|certificate_|pm_",
            text_pattern=r"(?:credit_card|paypal|gift_card|certificate)_\d{7}",
        ),
        KeyField(key_type="session", columns=["session_id"]),
        KeyField(key_type="trace", columns=["trace_id"]),
        # the source's task id (dedup.task_id_pattern): one pseudonym per task, so a
        # reviewer can group the published cases by task
        KeyField(key_type="task", columns=["task_id"]),
    ]


class RedactionConfig(StrictModel):
    """PII scrubbing, keyed pseudonyms for primary keys, verification, opt-out."""

    key_rules: dict[str, str] = Field(
        default_factory=_default_key_rules,
        description="Key-name pattern -> entity type. A value under a matching key is personal "
        "data of its case, whatever it looks like (patterns as in `key_fields.fields`).",
    )
    non_personal_keys: list[str] = Field(
        default_factory=lambda: [
            "item_id",
            "itemId",
            "item_ids",
            "new_item_ids",
            "product_id",
            "productId",
            "sku",
            "flight_number",
            "flightNumber",
            "country",
            "country_code",
            "countryCode",
        ],
        description="Key-name patterns whose values are business identifiers or reference data, "
        "never personal (a 10-digit item id is a valid US phone number; a country is not an "
        "address). Their values are not scanned when they have an identifier's shape, and a "
        "free-text finding equal to one of them in the same case is ignored. A pattern naming "
        "the key itself beats one that only names a parent (`country` beats `*address.*`).",
    )
    sensitive_keys: dict[str, str] = Field(
        default_factory=_default_sensitive_keys,
        description="Key names that are evidence by themselves (password, ssn, dob, tel, mail, "
        "name, contact, account...): the value is personal or secret whatever its shape. "
        "Checked after `key_rules`; extend it rather than replacing it (emptying it weakens "
        "redaction and is refused).",
    )
    unknown_identifiers: Literal["pseudonymise", "quarantine", "keep"] = Field(
        "pseudonymise",
        description="Identifier-shaped values (6+ digits, or letters mixed with digits) under "
        "keys no rule classifies: `pseudonymise` (keyed, format-keeping, like key fields), "
        "`quarantine` the case, or `keep` (weakening: refused unless unsafe_allow_weakened). "
        "Exempt business ids with `non_personal_keys`.",
    )
    unsafe_allow_weakened: bool = Field(
        False,
        description="Allow a configuration below the redaction floor (no recognizers, no key "
        "fields, thresholds that disable detection, unknown identifiers kept). Recorded in "
        "the manifest and shown in the report header. Never in production.",
    )
    key_fields: list[KeyField] = Field(
        default_factory=_default_key_fields,
        description="Primary keys replaced by HMAC-SHA256 pseudonyms, the same everywhere.",
    )
    recognizers: list[str] = Field(
        default_factory=lambda: list(REGISTERED),
        description="Free-text recognizers to run, by registered name (default: every one, in "
        f"the registry's order: {', '.join(REGISTERED)}). Prefer `disabled_recognizers` to "
        "switch one off; a misspelt name is an error naming the closest registered one.",
    )
    disabled_recognizers: list[str] = Field(
        default_factory=list,
        description="Registered recognizers switched off by name (e.g. `[bare_name]`); the "
        "verifier still runs its floor (email, phone, credit_card, iban, secrets).",
    )
    phone_regions: list[str] = Field(
        default_factory=lambda: [
            *("US", "GB", "FR", "AU", "DE", "RU", "TR", "GR", "MX", "ES", "IT", "NL", "PL")
        ],
        description="Regions whose national formats the phone recognizer tries (each costs a "
        "phonenumbers pass over a phone-like candidate that no earlier region took whole; "
        "German 0151 2345 6789, Russian 8 (916) 123-45-67, Turkish 0532 123 45 67, Greek "
        "694 123 4567 and Mexican 55 1234 5678 are valid only in their own region). "
        "International numbers (+44 ...) are found whatever the region; Chinese mobiles and "
        "NANP-shaped numbers have their own recognizers.",
    )
    score_threshold: float = Field(
        0.3, ge=0, le=1, description="Minimum recognizer score for a free-text finding."
    )
    verify_threshold: float = Field(
        0.4,
        ge=0,
        le=1,
        description="After scrubbing, any re-scan finding at or above this score quarantines "
        "the case.",
    )
    min_propagation_length: int = Field(
        3,
        ge=1,
        description="Personal values shorter than this are scrubbed where found but not searched "
        "for elsewhere (a two-letter state code would otherwise hit every word).",
    )
    min_name_length: int = Field(
        2,
        ge=1,
        description="The same for names (PERSON): short surnames such as Li are still names.",
    )
    shard_name_dictionary: bool = Field(
        True,
        description="Names found in any case of a batch (by key rules or recognizers) are "
        "also looked for in the free text of every other case of that batch (earlier turns of "
        "a session often name the customer with nothing marking it as a name).",
    )
    ner_model: str | None = Field(
        None,
        description="Optional spaCy pipeline (installed package name or directory) adding "
        "PERSON/LOCATION/NRP from NER. Never downloaded: a missing model is an error.",
    )
    ner_entities: list[str] = Field(
        default_factory=lambda: ["PERSON", "LOCATION", "NRP"],
        description="NER entity types kept when `ner_model` is set.",
    )
    key_secret_block: str | None = Field(
        None,
        description="Name of a Prefect Secret block holding the pseudonym key, used when "
        "GOLDEN_PSEUDONYM_KEY is not set.",
    )
    local_key_file: str | None = Field(
        None,
        description="Demo only: a key file created (mode 0600) on first use when neither the "
        "environment nor a Secret block gives a key. Leave empty in production.",
    )

    @field_validator("recognizers", "disabled_recognizers")
    @classmethod
    def _registered(cls, names: list[str]) -> list[str]:
        return resolve(names)  # retired names map to their successor; unknown ones are errors

    @property
    def active_recognizers(self) -> list[str]:
        """The recognizers that run: ``recognizers`` minus ``disabled_recognizers``."""
        off = set(self.disabled_recognizers)
        return [n for n in self.recognizers if n not in off]

    @model_validator(mode="after")
    def _floor(self) -> RedactionConfig:
        problems = weakening_settings(self)
        if problems and not self.unsafe_allow_weakened:
            raise ValueError(
                "redaction below its floor: "
                + "; ".join(problems)
                + " (set redaction.unsafe_allow_weakened: true to run anyway; it is recorded "
                "in the manifest and shown in the report)"
            )
        return self

    @field_validator("key_rules", "sensitive_keys")
    @classmethod
    def _entity_names(cls, rules: dict[str, str]) -> dict[str, str]:
        for pattern, entity in rules.items():
            if not re.fullmatch(r"[A-Z][A-Z0-9_]*", entity):
                raise ValueError(f"{pattern}: entity type must be UPPER_SNAKE (got {entity!r})")
        return rules


#: Thresholds above this disable detection (recognizer scores for real hits start at 0.5).
MAX_THRESHOLD = 0.5


def weakening_settings(config: RedactionConfig) -> list[str]:
    """The settings of ``config`` that weaken redaction below its floor, each named."""
    out = []
    active = config.active_recognizers
    if not active:
        out.append("redaction.recognizers is empty")
    missing = [n for n in FLOOR_RECOGNIZERS if n not in active]
    if active and missing:
        out.append(f"redaction.recognizers drops {', '.join(missing)}")
    if not config.key_fields:
        out.append("redaction.key_fields is empty")
    if not config.sensitive_keys:
        out.append("redaction.sensitive_keys is empty")
    if config.score_threshold > MAX_THRESHOLD:
        out.append(f"redaction.score_threshold {config.score_threshold} > {MAX_THRESHOLD}")
    if config.verify_threshold > MAX_THRESHOLD:
        out.append(f"redaction.verify_threshold {config.verify_threshold} > {MAX_THRESHOLD}")
    if config.unknown_identifiers == "keep":
        out.append("redaction.unknown_identifiers is keep")
    return out
