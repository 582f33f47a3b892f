"""The one list of free-text recognizers: every name a config can enable, disable or tune.

Each entry is a module of this package (``recognizers/<name>.py``) that declares one
``SPEC = RecognizerSpec(name="<name>", ...)``: a small declarative unit (entity types, a cheap
pre-filter, a builder), registered here once and nowhere else. ``SPECS`` (the package's
``__init__``), the config's default and its validation (``config.py``) and the shipped configs
all derive from this tuple, so a recognizer cannot be on in one place and unknown in another.

Kept free of Presidio imports: the config module reads it, and loading the recognizers costs
most of a second.
"""

from __future__ import annotations

import difflib

#: Registered recognizers, in the order they run (module name = config name = ``SPEC.name``).
REGISTERED: tuple[str, ...] = (
    "email",
    "phone",
    "credit_card",
    "iban",
    "ip_address",
    "cn_resident_id",
    "cn_mobile",
    "bank_card",
    "secrets",
    "introduced_name",
    "phone_shape",
    "street_address",
    "ssn_passport",
    "bare_name",
    "national_ids",
    "cued_numbers",
    "checked_ids",
    "stdnum_ids",
    "mrz",
    "streets_abroad",
    "credentials_in_text",
    "places_in_text",
)

#: Old names that configs may still carry, and the recognizer that replaced them (the
#: hand-written secret patterns became the detect-secrets ruleset).
RETIRED: dict[str, str] = {
    "api_key": "secrets",
    "bearer_token": "secrets",
    "password_assignment": "secrets",
    "private_key_block": "secrets",
}

#: Recognizers the verifier always runs, whatever a config enables (its floor).
FLOOR: tuple[str, ...] = ("email", "phone", "credit_card", "iban", "secrets")


class UnknownRecognizerError(ValueError):
    """A config names a recognizer that is not registered."""


def closest(name: str) -> str | None:
    """The registered (or retired) name nearest to ``name``, if any is near enough."""
    near = difflib.get_close_matches(name, [*REGISTERED, *RETIRED], n=1, cutoff=0.6)
    return near[0] if near else None


def resolve(names: list[str]) -> list[str]:
    """``names`` with retired names mapped to their successor, duplicates dropped, order kept;
    an unknown name is an error that suggests the closest registered one."""
    out = list(dict.fromkeys(RETIRED.get(n, n) for n in names))
    problems = []
    for name in out:
        if name not in REGISTERED:
            near = closest(name)
            hint = f"; did you mean {near!r}?" if near else ""
            problems.append(f"unknown recognizer {name!r}{hint}")
    if problems:
        raise UnknownRecognizerError(
            "; ".join(problems) + f" (registered: {', '.join(REGISTERED)})"
        )
    return out
