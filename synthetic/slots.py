"""One member's values: personal data, primary keys and business ids, and template filling.

``draw_slots`` draws every value a record may use, always in the same order and independently of
the scenario, so two records built from the same value seed share the same person, order id and
so on (the "same text, different write" pairs rely on it). ``fill`` resolves a catalogue template.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from golden_distill.synthetic import pii
from golden_distill.synthetic.pii import pick

#: slot name -> entity type of personal slots (the truth lists a value only where it appears)
PII_SLOTS: dict[str, str] = {
    "person": pii.PERSON,
    "email": pii.EMAIL,
    "address": pii.ADDRESS,
    "person2": pii.PERSON,
    "email2": pii.EMAIL,
    "card": pii.CREDIT_CARD,
    "iban": pii.IBAN,
    "bank_card": pii.BANK_CARD,
    "cn_id": pii.CN_RESIDENT_ID,
    "api_key": pii.API_KEY,
    "token": pii.BEARER_TOKEN,
    "password": pii.PASSWORD,
}
#: slot name -> key type (as the redaction package names them)
KEY_SLOTS: dict[str, str] = {
    "order_id": "order",
    "customer_id": "user",
    "account_id": "account",
    "reservation_id": "reservation",
    "payment_method": "payment_method",
}
_SLOT_RE = re.compile(r"\$([a-z_0-9]+)")


def _num(rng: random.Random, k: int) -> str:
    return f"{rng.getrandbits(40) % 10**k:0{k}d}"


def draw_slots(rng: random.Random, pools: pii.PiiPools, lang: str) -> dict[str, Any]:
    person = pools.persona(rng, lang)
    other = pools.persona(rng, lang)
    slots: dict[str, Any] = {
        "person": person.name,
        "email": person.email,
        "phone": person.phone,
        "address": person.address,
        "person2": other.name,
        "email2": other.email,
        "company": pools.company(rng, lang),
        "iban": pick(rng, pools.ibans),
        "bank_card": pick(rng, pools.bank_cards),
        "api_key": pick(rng, pools.api_keys),
        "token": pick(rng, pools.tokens),
        "password": pick(rng, pools.passwords),
        "order_id": f"ORD-{_num(rng, 6)}",
        "customer_id": f"CUST-{_num(rng, 8)}",
        "account_id": f"ACC-{_num(rng, 8)}",
        "reservation_id": f"RSV-{rng.getrandbits(30):08X}",
        "payment_method": rng.choice(("credit_card_", "pm_")) + _num(rng, 7),
        "invoice_id": f"INV-2026-{_num(rng, 6)}",
        "work_order": f"WO-{_num(rng, 6)}",
        "machine": f"M-{_num(rng, 3)}",
        "employee_id": f"EMP-{_num(rng, 5)}",
        "shipment_id": f"SHP-{_num(rng, 8)}",
        "ticket_id": f"TCK-{_num(rng, 7)}",
        "event_id": f"EVT-{_num(rng, 8)}",
        "po_number": f"PO-{_num(rng, 6)}",
        "sku": f"SKU-{_num(rng, 5)}",
        "sku2": f"SKU-{_num(rng, 5)}",
        "warehouse": f"WH-{_num(rng, 2)}",
        "vendor": f"VEND-{_num(rng, 4)}",
        "doc_id": f"KB-{_num(rng, 4)}",
        "request_id": f"req-{rng.getrandbits(64):016x}",
        "date": f"2026-12-{1 + rng.getrandbits(16) % 28:02d}",
        "qty": 1 + rng.getrandbits(16) % 500,
        "amount_small": round(rng.uniform(5, 9_500), 2),
        "amount_read_high": round(rng.uniform(20_000, 400_000), 2),
    }
    # Language-specific values (drawn in both cases so the random stream stays aligned).
    card = pools.credit_card(rng)
    cn_id = pick(rng, pools.cn_ids)
    if lang == "zh":
        slots["card"] = slots["bank_card"]
        slots["cn_id"] = cn_id
        slots["currency"] = "CNY"
    else:
        slots["card"] = card
        slots["cn_id"] = None
        slots["currency"] = rng.choice(("USD", "EUR"))
    slots["phone_type"] = person.phone_type
    return slots


def fill(template: Any, slots: dict[str, Any]) -> Any:
    """Resolve ``$slot`` references in a catalogue template; keys resolving to None are dropped."""
    if isinstance(template, str):
        if template.startswith("$") and template[1:] in slots:
            return slots[template[1:]]
        if "$" in template:
            return _SLOT_RE.sub(lambda m: str(slots.get(m.group(1), m.group(0))), template)
        return template
    if isinstance(template, dict):
        out = {}
        for k, v in template.items():
            val = fill(v, slots)
            if val is not None:
                out[k] = val
        return out
    if isinstance(template, list):
        return [fill(v, slots) for v in template]
    return template


Compiled = Callable[[dict[str, Any]], Any]


def compile_template(template: Any) -> Compiled:
    """``fill`` as a pre-built closure tree: the same result, without re-walking the template."""
    if isinstance(template, str):
        if template.startswith("$") and _SLOT_RE.fullmatch(template):
            name = template[1:]
            return lambda s: s.get(name, template)
        if "$" in template:
            return lambda s: _SLOT_RE.sub(lambda m: str(s.get(m.group(1), m.group(0))), template)
        return lambda s: template
    if isinstance(template, dict):
        items = [(k, compile_template(v)) for k, v in template.items()]

        def build(s: dict[str, Any]) -> dict[str, Any]:
            out = {}
            for k, fn in items:
                v = fn(s)
                if v is not None:
                    out[k] = v
            return out

        return build
    if isinstance(template, list):
        fns = [compile_template(v) for v in template]
        return lambda s: [fn(s) for fn in fns]
    return lambda s: template
