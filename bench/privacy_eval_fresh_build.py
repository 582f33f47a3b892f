"""Write ``tests/data/privacy_eval/fresh.jsonl``: a second held-out batch of privacy probes.

Written from format specifications and public examples only, without reading the detectors or
the other corpus halves (see the corpus README). Check digits are computed here so every
identifier is well-formed for its scheme; every value is synthetic and used once. Never tune
the detectors against this batch: it measures how redaction generalises to shapes nobody
wrote a rule for.

    .venv/bin/python bench/privacy_eval_fresh_build.py
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "privacy_eval" / "fresh.jsonl"


def luhn_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            d -= 9 if d > 9 else 0
        total += d
    return str((10 - total % 10) % 10)


_V_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_V_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]
_V_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_digit(body: str) -> str:
    c = 0
    for i, ch in enumerate(reversed(body)):
        c = _V_D[c][_V_P[(i + 1) % 8][int(ch)]]
    return str(_V_INV[c])


def bsn_ok(n: str) -> bool:
    return sum(int(d) * w for d, w in zip(n, [9, 8, 7, 6, 5, 4, 3, 2, -1], strict=True)) % 11 == 0


def cpf(body9: str) -> str:
    d = [int(c) for c in body9]
    for _ in range(2):
        s = sum(v * w for v, w in zip(d, range(len(d) + 1, 1, -1), strict=True))
        r = s % 11
        d.append(0 if r < 2 else 11 - r)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def dni(num: int) -> str:
    return f"{num:08d}" + "TRWAGMYFPDXBNJZSQVHLCKE"[num % 23]


def nie(prefix: str, num: int) -> str:
    n = int("XYZ".index(prefix).__str__() + f"{num:07d}")
    return f"{prefix}{num:07d}" + "TRWAGMYFPDXBNJZSQVHLCKE"[n % 23]


def nir(body13: str) -> str:
    key = 97 - int(body13) % 97
    b = body13
    return f"{b[0]} {b[1:3]} {b[3:5]} {b[5:7]} {b[7:10]} {b[10:13]} {key:02d}"


def steuer_id(body10: str) -> str:
    product = 10
    for ch in body10:
        s = (int(ch) + product) % 10
        s = 10 if s == 0 else s
        product = (s * 2) % 11
    check = 11 - product
    return body10 + str(0 if check == 10 else check)


_CF_ODD_VALUES = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21] * 2 + [2, 4, 18, 20, 11, 3, 6, 8, 12]
_CF_ODD_VALUES += [14, 16, 10, 22, 25, 24, 23]
_CF_ODD = dict(
    zip(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        _CF_ODD_VALUES,
        strict=True,
    )
)


def codice_fiscale(body15: str) -> str:
    total = 0
    for i, ch in enumerate(body15):
        if i % 2 == 0:
            total += _CF_ODD[ch]
        else:
            total += int(ch) if ch.isdigit() else ord(ch) - 65
    return body15 + chr(65 + total % 26)


def pesel(body10: str) -> str:
    s = sum(int(d) * w for d, w in zip(body10, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3], strict=True))
    return body10 + str((10 - s % 10) % 10)


def rrn(body12: str) -> str:
    w = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5]
    s = sum(int(d) * x for d, x in zip(body12, w, strict=True))
    full = body12 + str((11 - s % 11) % 10)
    return f"{full[:6]}-{full[6:]}"


def my_number(body11: str) -> str:
    s = 0
    for n in range(1, 12):
        p = int(body11[11 - n])
        q = n + 1 if n <= 6 else n - 5
        s += p * q
    r = s % 11
    full = body11 + str(0 if r <= 1 else 11 - r)
    return f"{full[:4]} {full[4:8]} {full[8:]}"


def tfn(body8: str) -> str:
    w = [1, 4, 3, 7, 5, 8, 6, 9, 10]
    for last in range(10):
        n = body8 + str(last)
        if sum(int(d) * x for d, x in zip(n, w, strict=True)) % 11 == 0:
            return f"{n[:3]} {n[3:6]} {n[6:]}"
    raise ValueError(body8)


def medicare(body8: str, issue: str) -> str:
    s = sum(int(d) * w for d, w in zip(body8, [1, 3, 7, 9, 1, 3, 7, 9], strict=True))
    n = body8 + str(s % 10) + issue
    return f"{n[:4]} {n[4:9]} {n[9]}"


_CURP_CHARS = "0123456789ABCDEFGHIJKLMNÑOPQRSTUVWXYZ"


def curp(body17: str) -> str:
    s = sum(_CURP_CHARS.index(c) * (18 - i) for i, c in enumerate(body17))
    return body17 + str((10 - s % 10) % 10)


def iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(digits) % 97
    return f"{country}{check:02d}{bban}"


def spaced4(s: str) -> str:
    return " ".join(s[i : i + 4] for i in range(0, len(s), 4))


def mrz_check(s: str) -> str:
    vals = [int(c) if c.isdigit() else (0 if c == "<" else ord(c) - 55) for c in s]
    return str(sum(v * [7, 3, 1][i % 3] for i, v in enumerate(vals)) % 10)


def mrz_line2(doc: str, nat: str, dob: str, sex: str, exp: str) -> str:
    doc9 = doc.ljust(9, "<")
    personal = "<" * 14
    parts = [
        doc9 + mrz_check(doc9),
        nat,
        dob + mrz_check(dob),
        sex,
        exp + mrz_check(exp),
        personal + mrz_check(personal),
    ]
    composite = parts[0] + parts[2] + parts[4] + parts[5]
    return "".join(parts) + mrz_check(composite)


_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check(payload: bytes) -> str:
    full = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n = int.from_bytes(full, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = _B58[r] + out
    return "1" * (len(full) - len(full.lstrip(b"\0"))) + out


_BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values: list[int]) -> int:
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (b >> i) & 1 else 0
    return chk


def bech32_p2wpkh(prog: bytes) -> str:
    acc, bits, data = 0, 0, [0]
    for b in prog:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    hrp = "bc"
    exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = _polymod(exp + data + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH[d] for d in data + chk)


def b64url(obj: dict[str, Any]) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _h(seed: str, n: int, alphabet: str) -> str:
    """Deterministic pseudo-random string (so the batch is reproducible)."""
    out, i = "", 0
    while len(out) < n:
        for byte in hashlib.sha256(f"{seed}:{i}".encode()).digest():
            out += alphabet[byte % len(alphabet)]
        i += 1
    return out[:n]


AN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
HEX = "0123456789abcdef"


def J(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def items() -> list[tuple[str, str, str, str, list[str], list[str]]]:
    """(category, entity, place, text, values, negatives) for every probe."""
    nir1 = nir("2870375120118")
    nir2 = nir("1920169388042")
    stid1 = steuer_id("8609543178")
    stid2 = steuer_id("5713069421")[:2] + " " + steuer_id("5713069421")[2:5] + " "
    stid2 += steuer_id("5713069421")[5:8] + " " + steuer_id("5713069421")[8:]
    dni1, dni2 = dni(48213756), dni(71094638)
    nie1 = nie("Y", 4172093)
    cf1 = codice_fiscale("BNCLCU82D14F205")
    cf2 = codice_fiscale("VRDGNN90M51H501")
    bsn1 = next(f"{n:09d}" for n in range(261473580, 261474999) if bsn_ok(f"{n:09d}"))
    bsn2 = next(f"{n:09d}" for n in range(503918260, 503919999) if bsn_ok(f"{n:09d}"))
    aad1 = "4839 2751 " + "906" + verhoeff_digit("48392751906")
    aad2b = "739160428853"[:11]
    aad2 = aad2b + verhoeff_digit(aad2b)
    cpf1, cpf2 = cpf("397481562"), cpf("152806943")
    sin_b = "54601837"
    sin1 = sin_b + luhn_digit(sin_b)
    sin1 = f"{sin1[:3]} {sin1[3:6]} {sin1[6:]}"
    sin2b = "91827364"
    sin2 = sin2b + luhn_digit(sin2b)
    sin2 = f"{sin2[:3]}-{sin2[3:6]}-{sin2[6:]}"
    tfn1 = tfn("46278315")
    med1 = medicare("29537104", "1")
    myn1 = my_number("40172856391")
    rrn1 = rrn("880415123456"[:12])
    rrn2 = rrn("950923267381")
    curp1 = curp("GAMR870312HDFRRN0")
    curp2 = curp("LOSA920715MJCPNL0")
    pes1, pes2 = pesel("8512073456"), pesel("0227154821")
    imei1b = "35391806417352"
    imei1 = imei1b + luhn_digit(imei1b)
    imei2b = "86071504238917"
    imei2 = imei2b + luhn_digit(imei2b)
    ib_no = iban("NO", "86011117947")
    ib_be = iban("BE", "063184927505")
    ib_pl = iban("PL", "102055610000481726350913")
    ib_se = iban("SE", "50000000058398257466")
    ib_ch = iban("CH", "0076204618273645T")
    ib_sa = iban("SA", "80000000608010167519")
    ib_tr = iban("TR", "0006100519786457841326")
    ib_br = iban("BR", "00360305000010009795493P1")
    mrz1 = mrz_line2("C4X7T2M91", "D<<", "870412", "F", "310228")
    mrz2 = mrz_line2("X5183926", "FRA", "910730", "M", "290611")
    btc1 = base58check(b"\x00" + hashlib.sha256(b"fresh-btc-1").digest()[:20])
    btc2 = bech32_p2wpkh(hashlib.sha256(b"fresh-btc-2").digest()[:20])
    eth1 = "0x" + _h("eth1", 40, HEX)
    eth2 = "0x" + _h("eth2", 40, HEX)
    aws = "AKIA" + _h("aws", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    aws_secret = _h("awssecret", 40, AN + "/+")
    stripe = "sk_live_" + _h("stripe", 24, AN)
    ghp = "ghp_" + _h("ghp", 36, AN)
    slack = f"xoxb-{_h('sl1', 12, '0123456789')}-{_h('sl2', 13, '0123456789')}-{_h('sl3', 24, AN)}"
    gapi = "AIza" + _h("gapi", 35, AN + "-_")
    openai = "sk-proj-" + _h("oai", 48, AN)
    sendgrid = "SG." + _h("sg1", 22, AN) + "." + _h("sg2", 43, AN)
    twilio = "SK" + _h("tw", 32, HEX)
    hf = "hf_" + _h("hf", 34, AN)
    jwt1 = ".".join(
        [
            b64url({"alg": "HS256", "typ": "JWT"}),
            b64url({"sub": "u-58213", "email": "akosua.mensah88@gmail.com", "iat": 1718000000}),
            _h("jwtsig", 43, AN + "-_"),
        ]
    )
    pem_body = _h("pem", 64, AN + "+/")
    gitlab = "glpat-" + _h("glpat", 20, AN)
    return [
        # --- national ids ---
        (
            "national_id:fr-nir-spaced",
            "NATIONAL_ID",
            "user_input",
            f"Mon numéro de sécurité sociale est le {nir1}, pour le vol AF1142 du 2025-03-14.",
            [nir1],
            ["AF1142", "2025-03-14"],
        ),
        (
            "national_id:fr-nir-json",
            "NATIONAL_ID",
            "step_arguments",
            J({"assure": {"numero_secu": nir2.replace(" ", "")}, "produit": "CARTE-VITALE-2"}),
            [nir2],
            ["CARTE-VITALE-2"],
        ),
        (
            "national_id:de-steuer-id",
            "NATIONAL_ID",
            "messages",
            f"Meine Steuer-ID lautet {stid1}. Bestellung 8830-DE bitte an Lager FRA3.",
            [stid1],
            ["8830-DE", "FRA3"],
        ),
        (
            "national_id:de-steuer-id-spaced",
            "NATIONAL_ID",
            "answer_text",
            f"Die steuerliche Identifikationsnummer {stid2} wurde für Tarif M-2024 hinterlegt.",
            [stid2],
            ["M-2024"],
        ),
        (
            "national_id:es-dni",
            "NATIONAL_ID",
            "user_input",
            f"Mi DNI es {dni1} y quiero cambiar el vuelo IB3167 a MAD.",
            [dni1],
            ["IB3167", "MAD"],
        ),
        (
            "national_id:es-dni-dashed",
            "NATIONAL_ID",
            "step_response",
            J({"cliente": {"documento": dni2[:8] + "-" + dni2[8]}, "tarifa": "PROMO-21"}),
            [dni2],
            ["PROMO-21"],
        ),
        (
            "national_id:es-nie",
            "NATIONAL_ID",
            "handoff_reason",
            f"Cliente extranjero con NIE {nie1} solicita verificación manual.",
            [nie1],
            [],
        ),
        (
            "national_id:it-codice-fiscale",
            "NATIONAL_ID",
            "user_input",
            f"Il mio codice fiscale è {cf1}, ordine n. 2024/IT/00817.",
            [cf1],
            ["2024/IT/00817"],
        ),
        (
            "national_id:it-cf-lower",
            "NATIONAL_ID",
            "messages",
            f"cf: {cf2.lower()} (scrivo in minuscolo scusate) modello XR-500",
            [cf2],
            ["XR-500"],
        ),
        (
            "national_id:nl-bsn",
            "NATIONAL_ID",
            "user_input",
            f"Mijn BSN is {bsn1}. Artikelnummer 4006381333931 graag.",
            [bsn1],
            ["4006381333931"],
        ),
        (
            "national_id:nl-bsn-dotted",
            "NATIONAL_ID",
            "final_state",
            f"burgerservicenummer={bsn2[:4]}.{bsn2[4:6]}.{bsn2[6:]};status=verified",
            [bsn2],
            ["status=verified"],
        ),
        (
            "national_id:in-aadhaar",
            "NATIONAL_ID",
            "user_input",
            f"My Aadhaar number is {aad1}, flight 6E 2047 from BLR.",
            [aad1],
            ["6E 2047", "BLR"],
        ),
        (
            "national_id:in-aadhaar-csv",
            "NATIONAL_ID",
            "step_response",
            J({"csv": f"name_masked,aadhaar,plan\nXXXX,{aad2},GOLD-12\n"}),
            [aad2],
            ["GOLD-12"],
        ),
        (
            "national_id:in-pan",
            "NATIONAL_ID",
            "messages",
            "PAN card: BKZPR4721H — please link it to invoice INV-2024-77153.",
            ["BKZPR4721H"],
            ["INV-2024-77153"],
        ),
        (
            "national_id:br-cpf",
            "NATIONAL_ID",
            "user_input",
            f"Meu CPF é {cpf1}, pedido #BR-55821 sapato tamanho 42.",
            [cpf1],
            ["#BR-55821"],
        ),
        (
            "national_id:br-cpf-digits",
            "NATIONAL_ID",
            "step_arguments",
            J({"cpf": cpf2.replace(".", "").replace("-", ""), "sku": "SKU-77120-PR"}),
            [cpf2],
            ["SKU-77120-PR"],
        ),
        (
            "national_id:ca-sin",
            "NATIONAL_ID",
            "user_input",
            f"My SIN is {sin1}. I'm flying AC 856 YYZ to LHR.",
            [sin1],
            ["AC 856", "YYZ"],
        ),
        (
            "national_id:ca-sin-dashed",
            "NATIONAL_ID",
            "answer_text",
            f"Numéro d'assurance sociale {sin2} enregistré; version 3.8.1 du formulaire.",
            [sin2],
            ["3.8.1"],
        ),
        (
            "national_id:au-tfn",
            "NATIONAL_ID",
            "messages",
            f"TFN {tfn1} — can you update my super fund? Ref product SUPER-BAL-7.",
            [tfn1],
            ["SUPER-BAL-7"],
        ),
        (
            "national_id:au-medicare",
            "NATIONAL_ID",
            "step_arguments",
            J({"medicare_card": med1, "clinic": "SYD-North-04"}),
            [med1],
            ["SYD-North-04"],
        ),
        (
            "national_id:jp-my-number",
            "NATIONAL_ID",
            "user_input",
            f"マイナンバーは{myn1}です。便名はNH 215です。",
            [myn1],
            ["NH 215"],
        ),
        (
            "national_id:kr-rrn",
            "NATIONAL_ID",
            "user_input",
            f"주민등록번호 {rrn1} 입니다. 주문번호 KR-20240611-88.",
            [rrn1],
            ["KR-20240611-88"],
        ),
        (
            "national_id:kr-rrn-log",
            "NATIONAL_ID",
            "step_response",
            J({"log": f"2024-06-11T09:12:44Z INFO verify rrn={rrn2} result=match svc=kyc-v2"}),
            [rrn2],
            ["kyc-v2"],
        ),
        (
            "national_id:mx-curp",
            "NATIONAL_ID",
            "user_input",
            f"Mi CURP es {curp1}, vuelo AM 0452 a CUN.",
            [curp1],
            ["AM 0452", "CUN"],
        ),
        (
            "national_id:mx-curp-url",
            "NATIONAL_ID",
            "step_arguments",
            J({"url": f"https://tramites.example.mx/consulta?curp={curp2}&lang=es"}),
            [curp2],
            [],
        ),
        (
            "national_id:pl-pesel",
            "NATIONAL_ID",
            "messages",
            f"Mój PESEL to {pes1}. Zamówienie nr PL/2024/3391.",
            [pes1],
            ["PL/2024/3391"],
        ),
        (
            "national_id:pl-pesel-handoff",
            "NATIONAL_ID",
            "handoff_reason",
            f"Klient podał PESEL {pes2} i prosi o kontakt z konsultantem.",
            [pes2],
            [],
        ),
        # --- phones as written in their countries ---
        (
            "phone:fr-pairs",
            "PHONE_NUMBER",
            "user_input",
            "Rappelez-moi au 06 47 28 91 35 avant le vol AF 7712.",
            ["06 47 28 91 35"],
            ["AF 7712"],
        ),
        (
            "phone:fr-intl-dots",
            "PHONE_NUMBER",
            "answer_text",
            "Nous vous rappellerons au +33 6.58.20.47.13 demain.",
            ["+33 6.58.20.47.13"],
            [],
        ),
        (
            "phone:de-mobile",
            "PHONE_NUMBER",
            "messages",
            "Erreichbar unter 0171 4829 3756, Artikel 4711-B.",
            ["0171 4829 3756"],
            ["4711-B"],
        ),
        (
            "phone:de-intl-zero",
            "PHONE_NUMBER",
            "step_arguments",
            J({"telefon": "+49 (0)89 2418 7763", "tarif": "L-2025"}),
            ["+49 (0)89 2418 7763"],
            ["L-2025"],
        ),
        (
            "phone:it-mobile",
            "PHONE_NUMBER",
            "user_input",
            "Il mio cellulare è 347 582 9130, ordine 77-IT-4.",
            ["347 582 9130"],
            ["77-IT-4"],
        ),
        (
            "phone:es-mobile",
            "PHONE_NUMBER",
            "final_state",
            "contacto: 622 41 87 39; estado=pendiente",
            ["622 41 87 39"],
            ["estado=pendiente"],
        ),
        (
            "phone:br-mobile",
            "PHONE_NUMBER",
            "user_input",
            "Me liga no (21) 99374-1628, pedido 4410.",
            ["(21) 99374-1628"],
            [],
        ),
        (
            "phone:ru-eight",
            "PHONE_NUMBER",
            "messages",
            "Мой номер 8 (926) 417-38-52, заказ №A-1193.",
            ["8 (926) 417-38-52"],
            ["A-1193"],
        ),
        (
            "phone:jp-mobile",
            "PHONE_NUMBER",
            "user_input",
            "携帯は080-4172-9635です。JL 123便。",
            ["080-4172-9635"],
            ["JL 123"],
        ),
        (
            "phone:jp-fullwidth",
            "PHONE_NUMBER",
            "messages",
            "電話番号：０９０－３８１６－２７４９",
            ["０９０－３８１６－２７４９"],
            [],
        ),
        (
            "phone:kr-mobile",
            "PHONE_NUMBER",
            "answer_text",
            "연락처 010-5821-3476 로 안내드리겠습니다.",
            ["010-5821-3476"],
            [],
        ),
        (
            "phone:in-mobile",
            "PHONE_NUMBER",
            "handoff_reason",
            "Customer asks for a callback on +91 98451 27630 in Hindi.",
            ["+91 98451 27630"],
            [],
        ),
        (
            "phone:nl-mobile",
            "PHONE_NUMBER",
            "user_input",
            "Bel me op 06-41827365 over bestelling NL-8812.",
            ["06-41827365"],
            ["NL-8812"],
        ),
        (
            "phone:pl-mobile",
            "PHONE_NUMBER",
            "step_response",
            J({"klient": {"tel": "+48 605 318 274"}, "produkt": "Router AX3000"}),
            ["+48 605 318 274"],
            ["Router AX3000"],
        ),
        (
            "phone:tr-mobile",
            "PHONE_NUMBER",
            "messages",
            "Numaram 0532 817 46 29, sipariş TR-5521.",
            ["0532 817 46 29"],
            ["TR-5521"],
        ),
        (
            "phone:th-mobile",
            "PHONE_NUMBER",
            "user_input",
            "เบอร์โทร 089 417 2638 ครับ เที่ยวบิน TG 628",
            ["089 417 2638"],
            ["TG 628"],
        ),
        (
            "phone:il-mobile",
            "PHONE_NUMBER",
            "user_input",
            "הטלפון שלי 054-7382916, הזמנה 7781.",
            ["054-7382916"],
            [],
        ),
        (
            "phone:gr-mobile",
            "PHONE_NUMBER",
            "answer_text",
            "Θα σας καλέσουμε στο 694 518 2730.",
            ["694 518 2730"],
            [],
        ),
        (
            "phone:au-mobile",
            "PHONE_NUMBER",
            "step_arguments",
            J({"contact": "0438 291 657", "plan": "NBN-100"}),
            ["0438 291 657"],
            ["NBN-100"],
        ),
        (
            "phone:mx-mobile",
            "PHONE_NUMBER",
            "messages",
            "Mi cel es 55 3718 2946, gracias.",
            ["55 3718 2946"],
            [],
        ),
        (
            "phone:es-words",
            "PHONE_NUMBER",
            "user_input",
            "mi número es seis cuatro uno, tres ocho, dos siete, nueve cinco",
            ["seis cuatro uno, tres ocho, dos siete, nueve cinco"],
            [],
        ),
        (
            "phone:de-words",
            "PHONE_NUMBER",
            "messages",
            "Nummer: null eins sieben zwei, acht drei vier, fünf sechs neun null",
            ["null eins sieben zwei, acht drei vier, fünf sechs neun null"],
            [],
        ),
        (
            "phone:tel-uri",
            "PHONE_NUMBER",
            "step_response",
            J({"html": '<a href="tel:+4420794618375">call</a>', "sku": "PX-9"}),
            ["+4420794618375"],
            ["PX-9"],
        ),
        (
            "phone:log-line",
            "PHONE_NUMBER",
            "step_response",
            J({"log": "2024-07-02 11:03:17 WARN sms.send to=+351912847361 status=queued"}),
            ["+351912847361"],
            ["status=queued"],
        ),
        # --- e-mail disguises ---
        (
            "email:es-arroba",
            "EMAIL_ADDRESS",
            "user_input",
            "mi correo es lucia.ferrandiz arroba gmail punto com",
            ["lucia.ferrandiz"],
            [],
        ),
        (
            "email:de-punkt",
            "EMAIL_ADDRESS",
            "messages",
            "Mail: h.brueckner at web punkt de",
            ["h.brueckner"],
            [],
        ),
        (
            "email:ru-sobaka",
            "EMAIL_ADDRESS",
            "user_input",
            "почта: vasilisa.k92 собака yandex точка ru",
            ["vasilisa.k92"],
            [],
        ),
        (
            "email:fr-arobase",
            "EMAIL_ADDRESS",
            "answer_text",
            "Écrivez à margaux.delcourt arobase orange point fr pour le suivi.",
            ["margaux.delcourt"],
            [],
        ),
        (
            "email:it-chiocciola",
            "EMAIL_ADDRESS",
            "messages",
            "scrivimi: f.esposito77 chiocciola libero punto it",
            ["f.esposito77"],
            [],
        ),
        (
            "email:nl-apenstaartje",
            "EMAIL_ADDRESS",
            "user_input",
            "mijn mail is jdevries.utrecht apenstaartje ziggo punt nl",
            ["jdevries.utrecht"],
            [],
        ),
        (
            "email:pl-malpa",
            "EMAIL_ADDRESS",
            "messages",
            "mail: kasia.wozniak małpa wp kropka pl",
            ["kasia.wozniak"],
            [],
        ),
        (
            "email:idn-unicode",
            "EMAIL_ADDRESS",
            "user_input",
            "E-mail: müller.jürgen@gmx.de, Flug LH 402.",
            ["müller.jürgen@gmx.de"],
            ["LH 402"],
        ),
        (
            "email:cyrillic-domain",
            "EMAIL_ADDRESS",
            "step_arguments",
            J({"email": "иван.петров@почта.рф", "tier": "gold"}),
            ["иван.петров@почта.рф"],
            [],
        ),
        (
            "email:fullwidth-at",
            "EMAIL_ADDRESS",
            "messages",
            "メール：tanaka.haruto＠docomo.ne.jp",
            ["tanaka.haruto"],
            [],
        ),
        (
            "email:plus-tag-url",
            "EMAIL_ADDRESS",
            "step_arguments",
            J({"url": "https://shop.example.com/unsub?u=ravi.k%2Bshop%40outlook.com&c=NL4"}),
            ["ravi.k+shop@outlook.com"],
            [],
        ),
        (
            "email:jwt-payload",
            "EMAIL_ADDRESS",
            "step_response",
            J({"token": jwt1}),
            ["akosua.mensah88@gmail.com"],
            [],
        ),
        (
            "email:csv-row",
            "EMAIL_ADDRESS",
            "step_response",
            J({"export": "id,email,plan\n7712,olufemi.adeyemi@yahoo.co.uk,PRO-3\n"}),
            ["olufemi.adeyemi@yahoo.co.uk"],
            ["PRO-3"],
        ),
        (
            "email:final-state",
            "EMAIL_ADDRESS",
            "final_state",
            "ticket_closed notify=sigrid.haugen@online.no",
            ["sigrid.haugen@online.no"],
            [],
        ),
        # --- names after natural cues ---
        (
            "name:korean",
            "PERSON",
            "user_input",
            "안녕하세요, 제 이름은 박서연입니다. 주문 KR-7781 확인 부탁드려요.",
            ["박서연"],
            ["KR-7781"],
        ),
        ("name:thai", "PERSON", "user_input", "สวัสดีครับ ผมชื่อ ธนากร ศรีสุข ครับ", ["ธนากร ศรีสุข"], []),
        (
            "name:greek",
            "PERSON",
            "messages",
            "Γεια σας, με λένε Σταύρος Αντωνίου και έχω πτήση A3 602.",
            ["Σταύρος Αντωνίου"],
            ["A3 602"],
        ),
        (
            "name:russian",
            "PERSON",
            "user_input",
            "Здравствуйте, меня зовут Елизавета Громова.",
            ["Елизавета Громова"],
            [],
        ),
        (
            "name:ukrainian",
            "PERSON",
            "handoff_reason",
            "Клієнтка Оксана Ткачук просить зателефонувати.",
            ["Оксана Ткачук"],
            [],
        ),
        (
            "name:hebrew",
            "PERSON",
            "user_input",
            "שלום, שמי נועה אברהמי ואני צריכה עזרה.",
            ["נועה אברהמי"],
            [],
        ),
        (
            "name:turkish",
            "PERSON",
            "messages",
            "Merhaba, benim adım Emre Çağlayan, siparişim gecikti.",
            ["Emre Çağlayan"],
            [],
        ),
        (
            "name:polish",
            "PERSON",
            "user_input",
            "Dzień dobry, nazywam się Grzegorz Przybylski.",
            ["Grzegorz Przybylski"],
            [],
        ),
        (
            "name:german-signoff",
            "PERSON",
            "answer_text",
            "Mit freundlichen Grüßen\nWiebke Oltmanns\nKundenservice",
            ["Wiebke Oltmanns"],
            [],
        ),
        (
            "name:french-cue",
            "PERSON",
            "messages",
            "Bonjour, je m'appelle Solène Marchetti, réservation vol AF 1380.",
            ["Solène Marchetti"],
            ["AF 1380"],
        ),
        (
            "name:italian-json",
            "PERSON",
            "step_arguments",
            J({"intestatario": "Gianluca Ferraresi", "prodotto": "Lavatrice WX-9"}),
            ["Gianluca Ferraresi"],
            ["Lavatrice WX-9"],
        ),
        (
            "name:portuguese",
            "PERSON",
            "user_input",
            "Oi, aqui é a Thaís Figueiredo, quero trocar o tamanho.",
            ["Thaís Figueiredo"],
            [],
        ),
        (
            "name:dutch-tussenvoegsel",
            "PERSON",
            "messages",
            "Mijn naam is Femke van der Heijden.",
            ["Femke", "Heijden"],
            [],
        ),
        (
            "name:chinese-pinyin-csv",
            "PERSON",
            "step_response",
            J({"csv": "passenger,seat,flight\nZHOU Yuting,14C,CA 981\n"}),
            ["ZHOU Yuting"],
            ["14C", "CA 981"],
        ),
        (
            "name:mrz-name-line",
            "PERSON",
            "user_input",
            "P<NORHALVORSEN<<INGRID<MARIE<<<<<<<<<<<<<<<<<",
            ["HALVORSEN", "INGRID MARIE"],
            [],
        ),
        (
            "name:email-greeting",
            "PERSON",
            "step_response",
            J({"body": "Dear Mr. Oyelaran-Bakare,\nyour refund for SKU 30-114 is on its way."}),
            ["Oyelaran-Bakare"],
            ["SKU 30-114"],
        ),
        (
            "name:final-state",
            "PERSON",
            "final_state",
            "escalated_to=Agent; customer=Bartholomew Quigley",
            ["Bartholomew Quigley"],
            [],
        ),
        # --- addresses ---
        (
            "address:de-street",
            "LOCATION",
            "user_input",
            "Bitte liefern an Lindenstraße 47, 04109 Leipzig.",
            ["Lindenstraße 47"],
            [],
        ),
        (
            "address:fr-rue",
            "LOCATION",
            "messages",
            "Mon adresse : 18 rue des Tanneurs, 67000 Strasbourg",
            ["18 rue des Tanneurs"],
            [],
        ),
        (
            "address:br-rua",
            "LOCATION",
            "user_input",
            "Endereço: Rua Harmonia, 1284, apto 52, Vila Madalena",
            ["Rua Harmonia, 1284"],
            [],
        ),
        (
            "address:ru-street",
            "LOCATION",
            "messages",
            "Адрес: ул. Садовая-Кудринская, д. 23, кв. 118",
            ["Садовая-Кудринская, д. 23, кв. 118"],
            [],
        ),
        (
            "address:kr-road",
            "LOCATION",
            "user_input",
            "배송지는 서울특별시 마포구 월드컵북로 396, 1203호 입니다.",
            ["월드컵북로 396, 1203호"],
            [],
        ),
        (
            "address:nl-gracht",
            "LOCATION",
            "step_arguments",
            J({"adres": "Prinsengracht 731-2", "postcode": "1017 JX"}),
            ["Prinsengracht 731-2"],
            [],
        ),
        (
            "address:pl-ul",
            "LOCATION",
            "answer_text",
            "Wysyłka na adres ul. Piotrkowska 164 m. 9, Łódź.",
            ["Piotrkowska 164 m. 9"],
            [],
        ),
        (
            "address:it-via",
            "LOCATION",
            "handoff_reason",
            "Il cliente vuole cambiare indirizzo in Via dei Serpenti 92, Roma.",
            ["Via dei Serpenti 92"],
            [],
        ),
        (
            "address:es-calle",
            "LOCATION",
            "messages",
            "Vivo en Calle de Fuencarral 117, 3º izquierda, Madrid.",
            ["Calle de Fuencarral 117, 3º izquierda"],
            [],
        ),
        (
            "address:us-multiline-json",
            "LOCATION",
            "step_response",
            J({"shipping": {"line1": "4417 Juniper Hollow Dr", "city": "Boise", "zip": "83704"}}),
            ["4417 Juniper Hollow Dr"],
            [],
        ),
        # --- network and device identifiers ---
        (
            "ip:ipv6-full",
            "IP_ADDRESS",
            "step_response",
            J({"log": "login from 2a02:8108:1a40:3b7c:91e2:4f0d:77ac:12e5 ua=Firefox/126.0"}),
            ["2a02:8108:1a40:3b7c:91e2:4f0d:77ac:12e5"],
            ["Firefox/126.0"],
        ),
        (
            "ip:ipv6-compressed",
            "IP_ADDRESS",
            "messages",
            "my home IP is 2001:16b8:4c1f::a93e if that helps",
            ["2001:16b8:4c1f::a93e"],
            [],
        ),
        (
            "ip:ipv4-mapped",
            "IP_ADDRESS",
            "step_arguments",
            J({"client_ip": "::ffff:83.217.44.109"}),
            ["83.217.44.109"],
            [],
        ),
        (
            "device:imei",
            "DEVICE_ID",
            "user_input",
            f"My phone's IMEI is {imei1}, model SM-S918B.",
            [imei1],
            ["SM-S918B"],
        ),
        (
            "device:imei-slashed",
            "DEVICE_ID",
            "step_response",
            J({"device": {"imei": f"{imei2[:2]}-{imei2[2:8]}-{imei2[8:14]}-{imei2[14]}"}}),
            [imei2],
            [],
        ),
        # --- bank accounts ---
        ("iban:no", "IBAN_CODE", "user_input", f"Kontonummer IBAN {ib_no}", [ib_no], []),
        (
            "iban:be-spaced",
            "IBAN_CODE",
            "messages",
            f"Mijn rekening: {spaced4(ib_be)}, factuur 2024-0091.",
            [ib_be],
            ["2024-0091"],
        ),
        (
            "iban:pl",
            "IBAN_CODE",
            "step_arguments",
            J({"rachunek": spaced4(ib_pl), "kwota": "149.99 PLN"}),
            [ib_pl],
            ["149.99 PLN"],
        ),
        ("iban:se-lower", "IBAN_CODE", "messages", f"iban {ib_se.lower()} tack", [ib_se], []),
        (
            "iban:ch",
            "IBAN_CODE",
            "answer_text",
            f"Erstattung geht an {spaced4(ib_ch)}.",
            [ib_ch],
            [],
        ),
        (
            "iban:sa",
            "IBAN_CODE",
            "handoff_reason",
            f"Refund to Saudi account {ib_sa} needs approval.",
            [ib_sa],
            [],
        ),
        ("iban:tr", "IBAN_CODE", "user_input", f"IBAN numaram {spaced4(ib_tr)}", [ib_tr], []),
        (
            "iban:br",
            "IBAN_CODE",
            "step_response",
            J({"conta": {"iban": ib_br}, "banco": "001"}),
            [ib_br],
            [],
        ),
        # --- passports ---
        (
            "passport:mrz-td3-de",
            "PASSPORT",
            "user_input",
            f"Scan: P<D<<SCHMIDTKE<<ANNIKA<<<<<<<<<<<<<<<<<<<<<\n{mrz1}",
            [mrz1[:9], "SCHMIDTKE"],
            [],
        ),
        (
            "passport:mrz-json",
            "PASSPORT",
            "step_response",
            J({"mrz": ["P<FRALEFEBVRE<<BASTIEN<<<<<<<<<<<<<<<<<<<<<", mrz2]}),
            [mrz2[:9], "LEFEBVRE"],
            [],
        ),
        (
            "passport:number-cue-es",
            "PASSPORT",
            "messages",
            "Mi número de pasaporte es PAF482913, vuelo UX 1095.",
            ["PAF482913"],
            ["UX 1095"],
        ),
        # --- dates of birth in other languages ---
        (
            "dob:fr",
            "DATE_OF_BIRTH",
            "user_input",
            "Je suis né le 14 mars 1987, vol le 2025-06-02.",
            ["14 mars 1987"],
            ["2025-06-02"],
        ),
        ("dob:de", "DATE_OF_BIRTH", "messages", "Geburtsdatum: 3. Juli 1979", ["3. Juli 1979"], []),
        (
            "dob:es",
            "DATE_OF_BIRTH",
            "user_input",
            "Fecha de nacimiento: 22 de octubre de 1991",
            ["22 de octubre de 1991"],
            [],
        ),
        ("dob:ja", "DATE_OF_BIRTH", "user_input", "生年月日：1985年4月9日", ["1985年4月9日"], []),
        (
            "dob:ru",
            "DATE_OF_BIRTH",
            "messages",
            "дата рождения 05.11.1978, рейс SU 1402 28.08.2025",
            ["05.11.1978"],
            ["SU 1402"],
        ),
        (
            "dob:pl",
            "DATE_OF_BIRTH",
            "step_arguments",
            J({"data_urodzenia": "1993-02-17", "lot": "LO 281"}),
            ["1993-02-17"],
            ["LO 281"],
        ),
        # --- secrets ---
        (
            "secret:aws-access-key",
            "SECRET",
            "step_arguments",
            J({"env": {"AWS_ACCESS_KEY_ID": aws, "AWS_SECRET_ACCESS_KEY": aws_secret}}),
            [aws, aws_secret],
            [],
        ),
        (
            "secret:stripe-live",
            "SECRET",
            "messages",
            f"here's our key {stripe} use it for the refund",
            [stripe],
            [],
        ),
        (
            "secret:github-pat",
            "SECRET",
            "step_arguments",
            J({"cmd": f"git clone https://{ghp}@github.com/acme/shop.git"}),
            [ghp],
            [],
        ),
        (
            "secret:slack-bot",
            "SECRET",
            "step_response",
            J({"config": f"SLACK_BOT_TOKEN={slack}\nCHANNEL=#ops"}),
            [slack],
            [],
        ),
        (
            "secret:google-api-key",
            "SECRET",
            "step_arguments",
            J(
                {
                    "url": f"https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={gapi}"
                }
            ),
            [gapi],
            [],
        ),
        ("secret:openai-key", "SECRET", "user_input", f"My OpenAI key is {openai}", [openai], []),
        (
            "secret:sendgrid",
            "SECRET",
            "step_response",
            J({"log": f"INFO mailer init api_key={sendgrid} region=eu"}),
            [sendgrid],
            [],
        ),
        (
            "secret:twilio-api-key",
            "SECRET",
            "final_state",
            f"failed auth with {twilio}",
            [twilio],
            [],
        ),
        ("secret:huggingface", "SECRET", "messages", f"export HF_TOKEN={hf}", [hf], []),
        (
            "secret:gitlab-pat",
            "SECRET",
            "answer_text",
            f"I used the token {gitlab} to trigger pipeline 48812.",
            [gitlab],
            [],
        ),
        (
            "secret:jwt-bearer",
            "SECRET",
            "step_arguments",
            J({"headers": {"Authorization": f"Bearer {jwt1}"}}),
            [jwt1.split(".")[2]],
            [],
        ),
        (
            "secret:private-key",
            "SECRET",
            "step_response",
            J(
                {
                    "file": "-----BEGIN OPENSSH PRIVATE KEY-----\n"
                    + pem_body
                    + "\n-----END OPENSSH PRIVATE KEY-----"
                }
            ),
            [pem_body],
            [],
        ),
        (
            "secret:db-url",
            "SECRET",
            "step_arguments",
            J({"dsn": "postgres://app_rw:Tr0mb0ne!Velvet@db.internal:5432/shop"}),
            ["Tr0mb0ne!Velvet"],
            [],
        ),
        # --- crypto wallets ---
        ("crypto:btc-base58", "CRYPTO", "user_input", f"send the refund to {btc1}", [btc1], []),
        ("crypto:btc-bech32", "CRYPTO", "messages", f"wallet: {btc2}", [btc2], []),
        (
            "crypto:eth",
            "CRYPTO",
            "step_arguments",
            J({"to": eth1, "amount_eth": "0.25"}),
            [eth1],
            ["0.25"],
        ),
        (
            "crypto:eth-url",
            "CRYPTO",
            "answer_text",
            f"See https://etherscan.io/address/{eth2} for the transfer.",
            [eth2],
            [],
        ),
        # --- pure negatives ---
        (
            "negative:flight-catalogue",
            "NONE",
            "step_response",
            J(
                {
                    "flights": [
                        {
                            "no": "LH 2471",
                            "from": "MUC",
                            "to": "CDG",
                            "date": "2025-09-12",
                            "fare": "ECO-FLEX",
                            "price": "189.40 EUR",
                        }
                    ]
                }
            ),
            [],
            ["LH 2471", "MUC", "CDG", "2025-09-12", "ECO-FLEX", "189.40 EUR"],
        ),
        (
            "negative:product-codes",
            "NONE",
            "step_response",
            J({"items": [{"sku": "B07XJ8C8F5", "ean": "4006381333931", "model": "WH-1000XM5"}]}),
            [],
            ["B07XJ8C8F5", "WH-1000XM5"],
        ),
        (
            "negative:versions",
            "NONE",
            "answer_text",
            "Upgrade from 10.4.12 to 11.0.3 (build 20240611.2) fixes it.",
            [],
            ["10.4.12", "11.0.3", "20240611.2"],
        ),
        (
            "negative:order-status",
            "NONE",
            "final_state",
            "order #W8427391 status=delivered carrier=DHL tracking=JD014600003828461936",
            [],
            ["#W8427391", "status=delivered", "DHL"],
        ),
        (
            "negative:iso-codes",
            "NONE",
            "messages",
            "Currency EUR, country DE, language de-DE, timezone Europe/Berlin, HTTP 404.",
            [],
            ["EUR", "de-DE", "Europe/Berlin", "HTTP 404"],
        ),
        (
            "negative:uuid-hash",
            "NONE",
            "step_response",
            J(
                {
                    "request_id": "3f2a9c1e-7b4d-4e8a-9f1c-2d5b6a7e8c90",
                    "commit": "9fceb02d0ae598e95dc970b74767f19372d61af8",
                }
            ),
            [],
            ["3f2a9c1e-7b4d-4e8a-9f1c-2d5b6a7e8c90"],
        ),
        (
            "negative:gtin-isbn",
            "NONE",
            "answer_text",
            "The book ISBN 978-3-16-148410-0 ships in 3-5 days, price 24,90 €.",
            [],
            ["978-3-16-148410-0", "24,90 €"],
        ),
        (
            "negative:tool-log",
            "NONE",
            "step_response",
            J({"log": "2025-01-14T08:00:00Z INFO cache hit ratio=0.93 shard=eu-west-1 pid=41822"}),
            [],
            ["eu-west-1", "ratio=0.93"],
        ),
    ]


def main() -> None:
    rows = []
    seen: set[str] = set()
    for n, (category, entity, place, text, values, negatives) in enumerate(items(), 1):
        for v in values:
            assert v not in seen, f"value used twice: {category}"
            seen.add(v)
        rows.append(
            {
                "id": f"pf{n:04d}",
                "category": category,
                "entity": entity,
                "place": place,
                "text": text,
                "values": values,
                "negatives": negatives,
            }
        )
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} items -> {OUT}")


if __name__ == "__main__":
    main()
