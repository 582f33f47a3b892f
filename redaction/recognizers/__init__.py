"""Curated recognizers, one per file; ``SPECS`` maps a config name to its spec."""

from __future__ import annotations

from golden_distill.redaction.recognizers import (
    bank_card,
    bare_name,
    checked_ids,
    cn_mobile,
    cn_resident_id,
    credentials_in_text,
    credit_card,
    cued_numbers,
    email,
    iban,
    introduced_name,
    ip_address,
    national_ids,
    phone,
    phone_shape,
    places_in_text,
    secrets,
    ssn_passport,
    street_address,
)
from golden_distill.redaction.recognizers.base import RecognizerSpec

SPECS: dict[str, RecognizerSpec] = {
    module.SPEC.name: module.SPEC
    for module in (
        email,
        phone,
        credit_card,
        iban,
        ip_address,
        cn_resident_id,
        cn_mobile,
        bank_card,
        secrets,
        introduced_name,
        phone_shape,
        street_address,
        ssn_passport,
        bare_name,
        national_ids,
        cued_numbers,
        checked_ids,
        credentials_in_text,
        places_in_text,
    )
}

__all__ = ["SPECS", "RecognizerSpec"]
