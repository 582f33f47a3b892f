"""Build the labelled privacy evaluation corpus (deterministic; its output is committed).

Values are shaped by published formats and examples, not by this project's detectors:
ITU-T E.164 national plans (phones), ISO 13616 / SWIFT IBAN registry examples, processor test
card numbers (Stripe/Adyen/PayPal docs), UK HMRC NINO and Royal Mail postcode formats, ISO 3779
VIN check digit, RFC 5322/6068 (e-mail, mailto), RFC 2045 (quoted-printable), RFC 3986
(percent-encoding), PowerShell ``-EncodedCommand`` (base64 of UTF-16LE), IEEE 802 MAC, WGS84
coordinates, RFC 6265 Set-Cookie. Each item plants values (with entity type) in one place of a
case and lists negatives (non-personal look-alikes that must stay verbatim).

    .venv/bin/python bench/privacy_eval_build.py  # writes tests/data/privacy_eval/*.jsonl

The split is stratified by category, seeded, and made once; rerunning reproduces it exactly.
"""

from __future__ import annotations

import base64
import json
import random
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "privacy_eval"
PLACES = (
    "user_input",
    "step_arguments",
    "step_response",
    "messages",
    "answer_text",
    "handoff_reason",
    "final_state",
)
NEG = [
    "Water Bottle",
    "15-inch",
    "1000ml",
    "USA",
    "JFK",
    "20:00:00",
    "2024-05-01",
    "Mechanical Keyboard",
    "calculate",
    "$120.50",
    "desk lamp",
    "LHR",
]

# name corpus: real-language given/family names (common names, public-domain lists)
NAMES = {
    "devanagari": (["राहुल", "प्रिया", "अमित", "सुनीता"], ["शर्मा", "वर्मा", "गुप्ता"], "मेरा नाम {n} है"),
    "japanese": (["さくら", "健太", "美咲"], ["田中", "佐藤", "鈴木"], "{n}と申します"),
    "arabic": (["محمد", "فاطمة", "أحمد"], ["الحسن", "العلي", "منصور"], "اسمي {n}"),
    "vietnamese": (
        ["Nguyễn Thị", "Trần Văn", "Lê Hoàng"],
        ["Hương", "Minh", "Lan"],
        "Tôi tên là {n}",
    ),
    "czech": (["Jiří", "Květoslava", "Přemysl"], ["Dvořák", "Novotná", "Šťastný"], "Dear {n},"),
    "spanish": (["José Ángel", "María Jesús"], ["Núñez", "Peña"], "Me llamo {n}"),
}


def luhn_ok(d: str) -> bool:
    s = 0
    for i, c in enumerate(reversed(d)):
        x = int(c) * (2 if i % 2 else 1)
        s += x - 9 if x > 9 else x
    return s % 10 == 0


def vin_check(v: str) -> str:
    tr = {
        **{str(i): i for i in range(10)},
        **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
        **dict(zip("JKLMN", range(1, 6), strict=True)),
        "P": 7,
        "R": 9,
        **dict(zip("STUVWXYZ", range(2, 10), strict=True)),
    }
    w = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]
    r = sum(tr[c] * w[i] for i, c in enumerate(v)) % 11
    return v[:8] + ("X" if r == 10 else str(r)) + v[9:]


def items() -> list[dict]:
    rnd = random.Random(36)
    out: list[dict] = []

    def add(cat, ent, text, values, place=None, negs=None):
        place = place or rnd.choice(PLACES)
        if negs is None:  # plant two catalogue look-alikes beside the value
            negs = rnd.sample(NEG, 2)
            if place == "final_state":
                negs = []
            elif text.startswith("{"):
                text = json.dumps({**json.loads(text), "items": negs}, ensure_ascii=False)
            else:
                text = f"{text} [order: {negs[0]}; {negs[1]}]"
        out.append(
            {
                "category": cat,
                "entity": ent,
                "place": place,
                "text": text,
                "values": values,
                "negatives": negs,
            }
        )

    users = [
        "liesel.vandermeer",
        "okonkwo.adaeze",
        "tomasz.wrobel",
        "ingrid.solberg",
        "rafael.quintero",
        "mei.lindqvist",
        "dario.esposito",
        "hana.kobayashi",
    ]
    doms = ["example.com", "mailbox.org", "example.net", "posteo.de"]
    for i, u in enumerate(users):
        e = f"{u}@{doms[i % 4]}"
        loc, dom = e.split("@")
        rev = "\u202e" + e[::-1] + "\u202c"
        ps = base64.b64encode(f"Send-MailMessage -To {e}".encode("utf-16le")).decode()
        forms = [
            (f"{loc}(at){dom}", "paren-at"),
            (f"{loc} (at) {dom}", "spaced-paren-at"),
            (f"{loc} @ {dom}", "spaced-at"),
            (f"{loc}=40{dom}", "quoted-printable"),
            (f"{loc}%2540{dom}", "double-percent"),
            (f"{loc}%40{dom}", "percent"),
            (e.encode().hex(), "hex-bytes"),
            (f"powershell -EncodedCommand {ps}", "utf16-base64"),
            (f"<span>{loc}</span>@<b>{dom}</b>", "html-split"),
            (f"mailto:{e}?cc=support@shop.test&subject=refund", "mailto-cc"),
            (rev, "rtl-reversed"),
            (f"{loc} [at] {dom.replace('.', ' [dot] ')}", "bracket-at-dot"),
            (f"{loc.upper()}@{dom.upper()}", "upper"),
            (base64.b64encode(e.encode()).decode(), "base64-utf8"),
        ]
        for form, kind in forms:
            add("email:" + kind, "EMAIL_ADDRESS", f"please reply to {form} about my order", [e])
    phones = [
        ("+55 11 91234-5678", "br-mobile", "Meu celular é {v}"),
        ("(21) 98765-4321", "br-mobile-national", "WhatsApp {v}"),
        ("010-6552 1234 转 803", "cn-landline-ext", "办公电话 {v}"),
        ("138.0013.8000", "cn-mobile-dots", "手机 {v}"),
        ("+49 151 23456789", "de-mobile-vcard", "BEGIN:VCARD\nTEL;TYPE=cell:{v}\nEND:VCARD"),
        ("+44 7700 900123", "uk-mobile", "call me on {v}"),
        ("07700 900456", "uk-mobile-national", "my number is {v}"),
        ("+33 6 12 34 56 78", "fr-mobile", "mon portable : {v}"),
        ("+91 98765 43210", "in-mobile", "मेरा नंबर {v} है"),
        ("090-1234-5678", "jp-mobile", "電話番号は{v}です"),
        ("+61 412 345 678", "au-mobile", "ring {v}"),
        ("+34 612 34 56 78", "es-mobile", "mi móvil es {v}"),
        ("+39 312 345 6789", "it-mobile", "cellulare {v}"),
        ("+52 55 1234 5678", "mx", "teléfono {v}"),
        ("+7 912 345-67-89", "ru-mobile", "телефон {v}"),
        ("+82 10-1234-5678", "kr-mobile", "전화 {v}"),
        ("+234 803 123 4567", "ng-mobile", "phone {v}"),
        ("(415) 555-0198", "us", "call {v}"),
    ]
    for v, kind, tpl in phones:
        for _ in range(3):
            add("phone:" + kind, "PHONE_NUMBER", tpl.format(v=v), [v])
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    for num in ["4155550177", "2125550143", "6175550110"]:
        add(
            "phone:words",
            "PHONE_NUMBER",
            "my cell is " + " ".join(words[int(c)] for c in num),
            [num],
        )
        add(
            "phone:letters-for-digits",
            "PHONE_NUMBER",
            "cell: " + num.replace("0", "O").replace("1", "l"),
            [num],
        )
        add("phone:combining", "PHONE_NUMBER", "tel " + "\u0301".join(num), [num])
        add(
            "phone:keycap", "PHONE_NUMBER", "tel " + "".join(c + "\ufe0f\u20e3" for c in num), [num]
        )
        add("label:sms", "PHONE_NUMBER", f"SMS_SENT_{num}", [num], place="final_state")
    for num in ["07911123456", "01714567890"]:
        add("label:sms", "PHONE_NUMBER", f"SMS_SENT_{num}", [num], place="final_state")
        add(
            "label:callback",
            "PHONE_NUMBER",
            f"CALLBACK_SCHEDULED_{num}",
            [num],
            place="final_state",
        )
    cards = [
        "4242424242424242",
        "5555555555554444",
        "4000056655665556",
        "6011111111111117",
        "3056930009020004",
        "3566002020360505",
    ]
    amex = ["378282246310005", "371449635398431"]
    for c in cards:
        assert luhn_ok(c)
        g = [c[i : i + 4] for i in range(0, 16, 4)]
        for sep, kind in [
            (".", "dots"),
            ("·", "middot"),
            (" 💳 ", "emoji"),
            ("-", "dash"),
            (" ", "space"),
        ]:
            add("card:" + kind, "CREDIT_CARD", f"charge card {sep.join(g)} please", [c])
        add(
            "card:json-float",
            "CREDIT_CARD",
            json.dumps({"card_number": float(c)}),
            [c],
            place="step_arguments",
        )
    for c in amex:
        assert luhn_ok(c)
        add("card:amex-dots", "CREDIT_CARD", f"amex {c[:4]}.{c[4:10]}.{c[10:]}", [c])
        add("card:amex-spaces", "CREDIT_CARD", f"amex {c[:4]} {c[4:10]} {c[10:]}", [c])
    ibans = [
        "GB82WEST12345698765432",
        "DE89370400440532013000",
        "FR1420041010050500013M02606",
        "NL91ABNA0417164300",
        "ES9121000418450200051332",
        "IT60X0542811101000000123456",
        "BE68539007547034",
        "CH9300762011623852957",
        "PL61109010140000071219812874",
        "AT611904300234573201",
    ]
    for ib in ibans:
        sp = " ".join(ib[i : i + 4] for i in range(0, len(ib), 4))
        add("iban:lower-compact", "IBAN_CODE", f"refund to {ib.lower()}", [ib])
        add("iban:lower-spaced", "IBAN_CODE", f"my iban: {sp.lower()}", [ib])
        add("iban:url", "IBAN_CODE", f"https://bank.test/pay?iban={ib.lower()}&amt=10", [ib])
        add("iban:upper-spaced", "IBAN_CODE", f"IBAN {sp}", [ib])
    for acct, rt in [
        ("000123456789", "021000021"),
        ("4417123456", "011000015"),
        ("987654321012", "121000358"),
    ]:
        add("bank:routing", "US_BANK_NUMBER", f"account {acct} routing {rt}", [acct])
        add("bank:bic", "US_BANK_NUMBER", f"Acct no. {acct}, BIC DEUTDEFF", [acct])
        add(
            "bank:free-text",
            "ACCOUNT_NUMBER",
            f"I want to close account ACCT{acct}",
            [f"ACCT{acct}"],
        )
    for d, kind in [
        ("3rd of March 1986", "ordinal-prose"),
        ("14.07.1979", "dotted"),
        ("born on 22/11/1990", "slash"),
        ("July 4th, 1975", "us-prose"),
        ("1984年5月6日生まれ", "japanese"),
        ("geboren am 02.09.1968", "german"),
        ("nacido el 17 de agosto de 1971", "spanish"),
        ("DOB: 1969-12-31", "iso"),
    ]:
        for place in ("user_input", "handoff_reason", "answer_text"):
            add("dob:" + kind, "DATE_OF_BIRTH", f"My date of birth is {d}.", [d], place=place)
    for pc in ["SW1A 1AA", "EC1A 1BB", "M1 1AE", "B33 8TH", "CR2 6XH", "DN55 1PT"]:
        add("place:uk-postcode", "UK_POSTCODE", f"deliver to 10 Acacia Road, London {pc}", [pc])
    for a in [
        "北京市朝阳区建国路88号SOHO现代城2号楼1503室",
        "上海市浦东新区世纪大道100号25层",
        "广东省深圳市南山区科技园路1号",
    ]:
        add("place:cn-address", "ADDRESS", f"请寄到{a}", [a])
    for a in [
        "〒100-0005 東京都千代田区丸の内1-9-1",
        "〒530-0001 大阪府大阪市北区梅田3-1-3",
        "〒060-0806 北海道札幌市北区北6条西4丁目",
    ]:
        add("place:jp-address", "ADDRESS", f"住所は{a}です", [a])
    for m in ["3C:22:FB:7A:91:0E", "a4-5e-60-c2-1b-9f", "0019.e8a4.7b21"]:
        add("device:mac", "MAC_ADDRESS", f"device mac {m} went offline", [m])
        add(
            "device:mac",
            "MAC_ADDRESS",
            json.dumps({"device": {"mac": m}}),
            [m],
            place="step_response",
        )
    for lat, lon in [
        (51.50722, -0.1275),
        (48.858844, 2.294351),
        (-33.856784, 151.215297),
        (35.689487, 139.691706),
    ]:
        add("place:gps-text", "LOCATION", f"I'm at {lat}, {lon} right now", [f"{lat}"])
        add(
            "place:gps-json",
            "LOCATION",
            json.dumps({"lat": lat, "lng": lon}),
            [f"{lat}"],
            place="step_response",
        )
    ids = [
        ("AB123456C", "UK_NINO", "my NI number is {v}"),
        ("QQ 12 34 56 C", "UK_NINO", "NINO {v}"),
        ("12-3456789", "US_EIN", "our EIN is {v}"),
        ("912-70-1234", "US_ITIN", "ITIN {v}"),
        ("D1234567", "US_DRIVER_LICENSE", "CA driver license {v}"),
        ("MORGA753116SM9IJ", "UK_DRIVING_LICENCE", "driving licence number {v}"),
        ("MRN 00482913", "MEDICAL_RECORD_NUMBER", "patient {v} admitted"),
        ("110105 19491231 002X", "CN_RESIDENT_ID", "身份证 {v}"),
        ("943 476 5919", "UK_NHS", "NHS number {v}"),
        ("X12345678", "PASSPORT", "passport no. {v}"),
        ("536-90-4399", "US_SSN", "ssn {v}"),
    ]
    for v, ent, tpl in ids:
        for _ in range(3):
            add("id:" + ent.lower(), ent, tpl.format(v=v), [v])
    for stem in ["1HGCM82633A00435", "1M8GDM9AXKP04278", "WP0ZZZ99ZTS39213"]:
        v = vin_check(stem[:8] + "0" + stem[8:])[:17]
        add("id:vin", "VIN", f"VIN {v} needs recall work", [v])
    for script, (given, family, tpl) in NAMES.items():
        for g in given:
            for f in family[:2]:
                n = f"{f}{g}" if script == "japanese" else f"{g} {f}"
                add("name:" + script, "PERSON", tpl.format(n=n), [n])
    for first, last in [("marta", "kowalczyk"), ("anders", "bjornstad"), ("chiara", "bellini")]:
        add("name:path-unix", "PERSON", f"/home/{first}.{last}/orders.csv", [f"{first}.{last}"])
        add(
            "name:path-windows",
            "PERSON",
            f"C:\\Users\\{first.title()}.{last.title()}\\Desktop",
            [f"{first.title()}.{last.title()}"],
        )
        add(
            "name:sql",
            "PERSON",
            f"SELECT * FROM users WHERE last_name = '{last.title()}' "
            f"AND first_name = '{first.title()}'",
            [last.title()],
            place="step_arguments",
        )
        add(
            "name:csv",
            "PERSON",
            f"id,name,qty\n7,{first.title()} {last.title()},2",
            [f"{first.title()} {last.title()}"],
            place="step_response",
        )
        add("name:handle", "PERSON", f"ping @{first}{last} on slack", [f"{first}{last}"])
        add("name:github", "PERSON", f"see https://github.com/{first}-{last}", [f"{first}-{last}"])
    for sid in ["9F86D081884C7D659A2FEAA0C55AD015", "A3F5C0DE77B1294E8D6F0A1B2C3D4E5F"]:
        add(
            "secret:set-cookie",
            "SESSION_ID",
            f"Set-Cookie: JSESSIONID={sid}; Path=/; HttpOnly",
            [sid],
            place="step_response",
        )
    for pw in ["Tr0ub4dor&3", "hunter2-Qx9"]:
        add(
            "secret:sshpass",
            "PASSWORD",
            f"sshpass -p '{pw}' ssh deploy@10.0.0.5",
            [pw],
            place="step_arguments",
        )
        add("secret:sshpass", "PASSWORD", f"sshpass -p {pw} scp a.txt host:", [pw])
    for u in ["kwame.mensah", "svetlana.p"]:
        add(
            "secret:log-user",
            "USERNAME",
            f"2024-05-01T20:00:00Z INFO login ok user={u} ip=10.2.3.4",
            [u],
            place="step_response",
        )
    # pure negatives: a case with no personal value whose look-alikes must survive
    for text in [
        "Options: 15-inch, 1000ml, colour Black; ship to USA from JFK at 20:00:00",
        "Mechanical Keyboard (clicky, RGB) x1 $120.50; Water Bottle 1000ml",
        "Flight HAT170 LAX 2024-05-20T08:00:00 → ORD; duration 03:45",
        "tool think returned ok; calculate 12.5*3 = 37.5; desk lamp 9V",
    ]:
        negs = [
            w
            for w in [
                "15-inch",
                "1000ml",
                "USA",
                "JFK",
                "20:00:00",
                "Mechanical Keyboard",
                "$120.50",
                "Water Bottle",
                "HAT170",
                "2024-05-20T08:00:00",
                "03:45",
                "calculate",
                "desk lamp",
                "LAX",
            ]
            if w in text
        ]
        for place in ("user_input", "step_response", "answer_text"):
            add("negative:catalogue", "NONE", text, [], place=place, negs=negs)
    for i, it in enumerate(out):
        it["id"] = f"pe{i:04d}"
    return out


def split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """Stratified by category, seeded: alternate halves within each shuffled category."""
    rnd = random.Random(1336)
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["category"]].append(r)
    tuning, heldout = [], []
    for cat in sorted(by):
        group = by[cat][:]
        rnd.shuffle(group)
        start = rnd.randrange(2)
        for j, r in enumerate(group):
            (tuning if (j + start) % 2 == 0 else heldout).append(r)
    return sorted(tuning, key=lambda r: r["id"]), sorted(heldout, key=lambda r: r["id"])


def main() -> None:
    rows = items()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, part in zip(("tuning", "heldout"), split(rows), strict=True):
        with (OUT / f"{name}.jsonl").open("w", encoding="utf-8") as f:
            for r in part:
                f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
        print(name, len(part), sum(len(r["values"]) for r in part))


if __name__ == "__main__":
    main()
