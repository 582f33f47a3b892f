"""An adversarial corpus: native recordings that each plant one unique personal or secret value.

Every probe is one recording with one marker (a value that must never be published) placed in
one awkward spot: under a key no rule knows, as a JSON number, behind an encoding, split by
separators, in a field the scrubber used to skip, in a JSON shape parsers disagree on, as a
secret from a real ruleset, or as a name/phone/address the curated recognizers missed. Markers are
unique per probe, so a search of every output file for every marker (and its digits-only form)
finds any leak and names the probe that caused it. Each recording selects itself (handoff
requested) and has its own read tool, so dedup never folds two probes into one cluster.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Record = dict[str, Any]


@dataclass(frozen=True)
class Probe:
    """One planted value: ``marker`` must appear in no output file (nor its digit form)."""

    probe_id: str
    category: str
    marker: str
    plant: Callable[[Record], None]
    #: a raw JSON text replacing the step response (shapes json.dumps cannot write)
    raw_response: str | None = None
    also: tuple[str, ...] = field(default_factory=tuple)  # further forms that must not appear

    def forms(self) -> list[str]:
        out = [self.marker, *self.also]
        digits = re.sub(r"\D", "", self.marker)
        if len(digits) >= 7 and digits not in out:
            out.append(digits)
        return out


# -- checksum helpers ----------------------------------------------------------------------
def luhn(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


def cn_id(body17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(c) * w for c, w in zip(body17, weights, strict=True))
    return body17 + "10X98765432"[total % 11]


def b64(text: str, url: bool = False) -> str:
    raw = text.encode()
    enc = base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)
    return enc.decode().rstrip("=") if url else enc.decode()


def jwt_with(payload: dict[str, Any]) -> str:
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}), url=True)
    body = b64(json.dumps(payload), url=True)
    return f"{head}.{body}.c2lnbmF0dXJlLXNpZ25hdHVyZS14eXo0NTY3ODkw"


# -- where a marker goes ---------------------------------------------------------------------
def in_response(key: str, value: Any) -> Callable[[Record], None]:
    def plant(rec: Record) -> None:
        rec["toolCalls"][0]["response"] = {"status": "FOUND", key: value}

    return plant


def in_arguments(key: str, value: Any) -> Callable[[Record], None]:
    def plant(rec: Record) -> None:
        rec["toolCalls"][0]["arguments"] = {"ticket": "T-1", key: value}

    return plant


def in_text(text: str) -> Callable[[Record], None]:
    def plant(rec: Record) -> None:
        rec["initialUserInput"] = text
        rec["context"]["messages"][1]["content"] = text

    return plant


def in_answer(text: str) -> Callable[[Record], None]:
    def plant(rec: Record) -> None:
        rec["finalOutputText"] = text

    return plant


def at(path: str, value: Any) -> Callable[[Record], None]:
    """Set a dotted path (``toolCalls.0.system``) of the recording."""

    def plant(rec: Record) -> None:
        node: Any = rec
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return plant


def nothing(rec: Record) -> None:
    """The probe's raw_response carries the marker."""


def base_record(n: int, probe_id: str) -> Record:
    return {
        "recordId": f"probe-{n:03d}",
        "sessionId": f"ses-probe-{n:03d}",
        "traceId": f"trc-probe-{n:03d}",
        "turnIndex": 0,
        "tenantId": "t-probe",
        "userId": f"u-probe-{n:03d}",
        "recordedAt": "2026-11-20T10:00:00.000Z",
        "agentVersion": "3.1.0",
        "modelIdentifier": "provider/model-x-2026-10",
        "modelParams": {"temperature": 0},
        "systemPromptVersion": "sp-7",
        "promptVariables": {"tenant": "t-probe"},
        "initialUserInput": f"please look into request {probe_id}",
        "intent": {"name": "support_request", "confidence": 0.9},
        "context": {
            "messages": [
                {"role": "system", "content": "You are the support assistant."},
                {"role": "user", "content": f"please look into request {probe_id}"},
            ],
            "memory": {},
            "retrievedChunks": [],
            "envVersions": {"crm_api": "v3"},
            "baselineState": {},
        },
        "toolCalls": [
            {
                "stepIndex": 0,
                "kind": "tool",
                "toolName": f"crm_probe_lookup_{n:03d}",
                "arguments": {"ticket": "T-1"},
                "response": {"status": "FOUND"},
                "status": "ok",
                "isMutating": False,
                "system": "CRM",
                "latencyMs": 12,
            }
        ],
        "handoff": {"requested": True, "reason": "needs a person"},
        "finalOutputText": "I have passed this on.",
        "finalStatus": "success",
        "expectedFinalState": "HANDED_OFF",
        "lowConfidence": False,
        "reward": 1.0,
    }


def _probes() -> list[Probe]:
    p: list[Probe] = []

    def add(category: str, marker: str, plant: Callable[[Record], None], **kw: Any) -> None:
        p.append(Probe(f"{category}-{len(p):03d}", category, marker, plant, **kw))

    # 1. values under keys no rule knew -----------------------------------------------------
    add("key", "539-48-2716", in_response("ssn", "539-48-2716"))
    add("key", "1987-04-23", in_response("birthday", "1987-04-23"))
    add("key", "1979-11-02", in_response("dob", "1979-11-02"))
    add("key", "X47120936", in_response("passportNumber", "X47120936"))
    add("key", "q8Zr2LmWv1Xp7TbN", in_response("api_key", "q8Zr2LmWv1Xp7TbN"))
    add("key", "Tr0ub4dor&3horse", in_response("password", "Tr0ub4dor&3horse"))
    add(
        "key",
        "Wq!9zeppelin",
        in_response("credentials", {"username": "okafor.admin77", "password": "Wq!9zeppelin"}),
        also=("okafor.admin77",),
    )
    add("key", "+1 312 555 0148", in_response("tel", "+1 312 555 0148"))
    add("key", "ravi.quillan@example.net", in_response("mail", "ravi.quillan@example.net"))
    add("key", "Ingrid Vasquez-Holt", in_response("name", "Ingrid Vasquez-Holt"))
    add("key", "Tobias Wrenfield", in_response("contact", "Tobias Wrenfield"))
    add("key", "GB-88410273", in_response("accountNo", "GB-88410273"))
    add("key", "7731904465", in_response("account_no", "7731904465"))
    add("key", "s3cr3t-Pl4nk-77", in_response("secret", "s3cr3t-Pl4nk-77"))
    add("key", "tok-9f8e7d6c5b4a3921", in_response("access_token", "tok-9f8e7d6c5b4a3921"))
    add("key", "92837465", in_response("pin", "92837465"))
    add("key", "D1234-56789-01234", in_response("driverLicense", "D1234-56789-01234"))
    add("key", "AB123456C", in_response("national_id", "AB123456C"))
    add("key", "98-7654321", in_response("tax_id", "98-7654321"))
    add("key", "Orla Bexley", in_response("holder_name", "Orla Bexley"))
    add(
        "key", "41 Quarry Lane, Dunmore", in_response("home", {"street": "41 Quarry Lane, Dunmore"})
    )
    add("key", "vk-user-quartz", in_response("username", "vk-user-quartz"))
    add("key", "CUST-99017342", in_response("clientRef", "CUST-99017342"))
    add("key", "778812345", in_response("member_number", 778812345))
    # 2. numbers ------------------------------------------------------------------------------
    card_num = luhn("411111222233334")
    add("number", card_num, in_response("x", int(card_num)))
    add("number", "13912345687", in_response("y", 13912345687))
    cid = cn_id("11010519880523701")
    if cid.endswith("X"):
        cid = cn_id("11010519880523702")
    add("number", cid, in_response("z", int(cid)) if cid[-1] != "X" else nothing)
    add("number", "4155550166", in_response("callback", 4155550166))
    add("number", "219097765", in_response("ssn", 219097765))
    card2 = luhn("550000555555444")
    add("number", card2, in_arguments("payWith", int(card2)))
    # 3. encodings ----------------------------------------------------------------------------
    add("encoding", "lena.morrow@example.org", in_text("write to lena.morrow%40example.org please"))
    add(
        "encoding",
        "perry.dunmoor@example.org",
        in_text("mail perry.dunmoor&#64;example.org today"),
        also=("perry.dunmoor",),
    )
    add("encoding", "ash.kettering@example.com", in_text("mail ash.kettering&#x40;example.com"))
    add(
        "encoding",
        "gail.ostrander@example.com",
        in_text("attachment: " + b64("contact gail.ostrander@example.com for the refund")),
        also=(b64("contact gail.ostrander@example.com for the refund"),),
    )
    add(
        "encoding",
        "hugo.penhale@example.com",
        in_response("blob", b64("hugo.penhale@example.com", url=True)),
        also=(b64("hugo.penhale@example.com", url=True),),
    )
    tok = jwt_with({"sub": "u1", "email": "noor.abernathy@example.com"})
    add("encoding", "noor.abernathy@example.com", in_text(f"session {tok} expired"), also=(tok,))
    add(
        "encoding",
        "wilma.stroud",
        in_text("reach me at wilma.stroud at example dot com"),
        also=("wilma.stroud at example dot com",),
    )
    add("encoding", "dex.harlan@example.com", in_text("url: mailto%3Adex.harlan%40example.com"))
    add(
        "encoding",
        "+14155550177",
        in_text("call " + urllib.parse.quote("+1 415 555 0177")),
        also=("4155550177",),
    )
    add("encoding", "cora.linwood@example.com", in_text("mail: cora.linwood&commat;example.com"))
    add("encoding", "BRAM.OSTERHAGEN@EXAMPLE.COM", in_text("MAIL BRAM.OSTERHAGEN@EXAMPLE.COM NOW"))
    add(
        "encoding",
        "jules.marchetti@example.com",
        in_response("note", "e-mail: jules.marchetti\\u0040example.com"),
    )
    # 4. split or disguised digits ------------------------------------------------------------
    c3 = luhn("401288888888188")
    add("digits", c3, in_text("card " + " ".join(c3)))
    c4 = luhn("520082828282821")
    add("digits", c4, in_text("card " + ".".join(c4[i : i + 2] for i in range(0, 16, 2))))
    c5 = luhn("601100099990139")
    add("digits", c5, in_text("card " + " ".join(c5[i : i + 2] for i in range(0, 16, 2))))
    c6 = luhn("378282246310005")[:15]
    c6 = luhn("37144963539843")
    add("digits", c6, in_text("amex " + "\u200b".join(c6)))
    c7 = luhn("356600202036050")
    add("digits", c7, in_text("jcb " + "\u200d".join(c7)))
    c8 = luhn("411111999988887")
    full = "".join(chr(0xFF10 + int(d)) for d in c8)
    add("digits", c8, in_text(f"card {full}"), also=(full, full[:-1]))
    add(
        "digits",
        "415-555-0199",
        in_text("phone \uff14\uff11\uff15\uff0d\uff15\uff15\uff15\uff0d\uff10\uff11\uff19\uff19"),
        also=("\uff14\uff11\uff15\uff0d\uff15\uff15\uff15\uff0d\uff10\uff11\uff19\uff19",),
    )
    add("digits", "13822334455", in_text("手机 138 2233 4455 谢谢"))
    add("digits", "13766554433", in_text("mobile 1 3 7 6 6 5 5 4 4 3 3"))
    add("digits", "412-87-6543", in_text("my social security number is 412 87 6543"))
    add("digits", "6175550123", in_text("ring 617.555.0123 after six"))
    cid2 = cn_id("31010419750814322")
    add("digits", cid2, in_text("身份证 " + " ".join([cid2[:6], cid2[6:14], cid2[14:]])))
    # 5. fields both passes skipped ------------------------------------------------------------
    add("field", "stan.ibsen@example.com", at("toolCalls.0.toolName", "stan.ibsen@example.com"))
    add("field", "mara.qualls@example.com", at("toolCalls.0.system", "mara.qualls@example.com"))
    add("field", "4155550134", at("intent.name", "call_4155550134"))
    add(
        "field", "pia.lundgren@example.com", at("modelParams", {"user": "pia.lundgren@example.com"})
    )
    add("field", "otto.brisk@example.com", at("agentVersion", "3.1.0+otto.brisk@example.com"))
    add("field", "fay.dorsey@example.com", at("modelIdentifier", "fay.dorsey@example.com"))
    add("field", "len.pardo@example.com", at("systemPromptVersion", "len.pardo@example.com"))
    add(
        "field",
        "rui.tavares@example.com",
        at("context.envVersions", {"owner": "rui.tavares@example.com"}),
    )
    add(
        "field",
        "zia.norcross@example.com",
        at(
            "context.retrievedChunks",
            [{"text": "policy text", "indexSnapshotId": "zia.norcross@example.com", "query": "q"}],
        ),
    )
    add(
        "field",
        "amos.greer@example.com",
        at("expectedFinalState", "SENT_TO_amos.greer@example.com"),
    )
    add("field", "bea.lockhart@example.com", at("recordId", "bea.lockhart@example.com"))
    add(
        "field",
        "Oswin Fairleigh",
        at("handoff", {"requested": True, "reason": "Oswin Fairleigh asked"}),
    )
    add("field", "cal.venn@example.com", at("finalStatus", "cal.venn@example.com"))
    add(
        "field",
        "ida.marsh@example.com",
        at(
            "context.retrievedChunks",
            [{"text": "t", "indexSnapshotId": "kb@1", "query": "ida.marsh@example.com"}],
        ),
    )
    add("field", "ned.crowe@example.com", at("toolCalls.0.error", "no inbox ned.crowe@example.com"))
    add("field", "eve.sallow@example.com", at("promptVariables", {"who": "eve.sallow@example.com"}))
    add("field", "Gideon Thrale", at("context.memory", {"name": "Gideon Thrale"}))
    # 6. JSON shapes ----------------------------------------------------------------------------
    add(
        "json",
        "kit.ambler@example.com",
        nothing,
        raw_response=json.dumps('  {"mail": "kit.ambler@example.com"}  '),
    )
    add(
        "json",
        "rex.dunlow@example.com",
        nothing,
        raw_response=json.dumps('{"mail": "rex.dunlow@example.com"}\n'),
    )
    add(
        "json",
        "Morwenna Pask",
        nothing,
        raw_response='{"name": "Morwenna Pask", "name": "ok"}',
    )
    add(
        "json",
        "558-21-9043",
        nothing,
        raw_response='{"n": 314159265358979323846264338327, "ssn": "558-21-9043"}',
    )
    add(
        "json",
        "669-30-1182",
        nothing,
        raw_response='{"n": 1e999, "ssn_code": "669-30-1182"}',
    )
    add("json", "欧阳娜娜", in_response("客户欧阳娜娜", {"status": "VIP"}))
    add("json", "tam.oduya@example.com", in_response("tam.oduya@example.com", {"status": "VIP"}))
    add("json", "4155550188", in_response("+1 (415) 555-0188", {"status": "VIP"}))
    add(
        "json",
        "uma.brightwater@example.com",
        nothing,
        raw_response='{"a": {"b": [{"c": "  uma.brightwater@example.com  "}]}, "a": 1}',
    )
    add(
        "json",
        "vic.hollis@example.com",
        nothing,
        raw_response=json.dumps(
            json.dumps({"inner": json.dumps({"mail": "vic.hollis@example.com"})})
        ),
    )
    # 7. secrets ------------------------------------------------------------------------------
    t2 = jwt_with({"sub": "8812", "role": "admin", "iat": 1700000000})
    add("secret", t2, in_text(f"token is {t2}"))
    add(
        "secret",
        "xoxb-2201234567-9876543210-AbCdEfGhIjKlMnOpQrStUvWx",
        in_text("slack xoxb-2201234567-9876543210-AbCdEfGhIjKlMnOpQrStUvWx"),
    )
    add(
        "secret",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        in_text("stripe key sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    )
    add(
        "secret",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        in_response("cfg", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    )
    add(
        "secret",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        in_text("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    )
    add("secret", "AKIAZ7QX3PLM4R2TWV8N", in_response("k", "AKIAZ7QX3PLM4R2TWV8N"))
    basic = base64.b64encode(b"orson:Gr4nite!Peak").decode()
    add("secret", basic, in_text(f"Authorization: Basic {basic}"), also=("Gr4nite!Peak",))
    add(
        "secret",
        "Pg5ecret!w0rd",
        in_response("dsn", "postgres://reporting:Pg5ecret!w0rd@db.internal:5432/sales"),
        also=("reporting:Pg5ecret",),
    )
    add("secret", "MyS9l-pa55", in_text("connect mysql://root:MyS9l-pa55@10.0.0.7/app"))
    add("secret", "zq81HHvv0Lr7", in_text("call the api with api_key=zq81HHvv0Lr7 then retry"))
    add(
        "secret",
        "harriet.vance",
        in_text("see https://harriet.vance:pw1234xyz@files.example.com/x"),
        also=("pw1234xyz",),
    )
    add(
        "secret",
        "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        in_text("gh ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    )
    pem_body = "MIIEowIBAAKCAQEA7bq98mXw1Zq2Lk4PpQvA0c9YtR3nHs8WdJf6UeKgTxV5yNiO"
    add(
        "secret",
        pem_body,
        in_response(
            "key", f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----"
        ),
    )
    add(
        "secret",
        "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90",
        in_text("openai sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90"),
    )
    add("secret", "H0rnbeam#2291", in_text("my password is H0rnbeam#2291 don't share"))
    add(
        "secret",
        "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",
        in_text("sendgrid 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"),
    )
    add(
        "secret",
        "npm_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa",
        in_text("npm token npm_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"),
    )
    add("secret", "Rk7pQ2xZ9mW4vN8b", in_response("client_secret", "Rk7pQ2xZ9mW4vN8b"))
    add(
        "secret",
        "d8f7a6b5c4e3d2f1a0b9c8d7e6f5a4b3",
        in_text('token: "d8f7a6b5c4e3d2f1a0b9c8d7e6f5a4b3"'),
    )
    add("secret", "Bearer-free-8Hk2", in_response("Authorization", "Bearer-free-8Hk2"))
    # 8. names, places, phones ------------------------------------------------------------------
    add("name", "marta quenby", in_text("hi, this is marta quenby, I need help"), also=("quenby",))
    add("name", "DESMOND ALBRECHT", in_text("MY NAME IS DESMOND ALBRECHT AND I NEED A REFUND"))
    add("name", "欧阳明月", in_text("你好，我叫欧阳明月，请帮我查一下"))
    add("name", "司马青云", in_text("我是司马青云，订单有问题"))
    add("name", "诸葛文", in_response("name", "诸葛文"))
    add("name", "上官婉儿", in_text("客户上官婉儿的订单"))
    add(
        "name",
        "1842 maple grove road",
        in_text("ship it to 1842 maple grove road, springfield, il 62704"),
    )
    add("name", "020 7946 0958", in_text("ring me on 020 7946 0958 tomorrow"))
    add("name", "07911 123456", in_text("my mobile is 07911 123456"))
    add("name", "123-45-6780", in_text("my ssn is 123-45-6780 thanks"))
    add("name", "C03005988", in_text("passport number C03005988 expires soon"))
    add("name", "+49 30 901820", in_text("Berlin office +49 30 901820 ext"))
    add("name", "01 42 68 53 00", in_text("appelez le 01 42 68 53 00 svp"))
    add("name", "Priya Ramaswamy", in_text("Thanks, Priya Ramaswamy here about my order"))
    add("name", "jonah whitcombe", in_text("the customer jonah whitcombe called"))
    add("name", "DE89370400440532013000", in_text("iban DE89370400440532013000 for refund"))
    add("name", "203.0.113.77", in_text("logged in from 203.0.113.77"))
    add("name", "Seraphina Oakhurst", in_response("customer", {"name": "Seraphina Oakhurst"}))
    add("name", "Lucan Merriweather", in_answer("Goodbye Lucan Merriweather, have a nice day"))
    add("name", "0412 345 678", in_text("aussie mobile 0412 345 678"))
    add("name", "+86 139 1111 2222", in_text("call +86 139 1111 2222"), also=("13911112222",))
    # 9. more that nobody listed ---------------------------------------------------------------
    add(
        "more", "ferris.lowe@example.com", in_response("notes", ["call", "ferris.lowe@example.com"])
    )
    add("more", "4155550142", in_text("phone=4155550142&ok=1"))
    add("more", "nell.ashdown+vip@example.com", in_text("cc nell.ashdown+vip@example.com"))
    add("more", "oren.pike@example.com", in_answer("sent to oren.pike@example.com"))
    add("more", "Quill Harrowgate", in_response("recipientName", "Quill Harrowgate"))
    add("more", "5105105105105100", in_text("card 5105-1051-0510-5100 declined"))
    add(
        "more",
        "ulla.brandt@example.com",
        at("handoff", {"requested": True, "reason": "ulla.brandt@example.com"}),
    )
    add(
        "more",
        "ivo.kessler@example.com",
        at("context.memory", {"history": [{"k": [{"deep": "ivo.kessler@example.com"}]}]}),
    )
    add("more", "9876543210123", in_response("loyaltyCard", "9876543210123"))
    add(
        "more",
        "FR7630006000011234567890189",
        in_response("bankAccount", "FR7630006000011234567890189"),
    )
    add("more", "1990-02-14", in_response("date_of_birth_text", "born 1990-02-14"))
    add("more", "wendell.cray@example.com", in_text("EMAIL: WENDELL.CRAY@EXAMPLE.COM".lower()))
    add("more", "6145550133", in_text("(614) 555-0133 is my number"))
    add(
        "more",
        "ysolde.marin@example.com",
        in_response("contacts", {"primary": {"value": "ysolde.marin@example.com"}}),
    )
    add("more", "7700900555", in_response("msisdn", "447700900555"), also=("447700900555",))
    add("more", "Barnaby Quell", in_text("Dear Barnaby Quell, your order shipped"))
    add("more", "kai.ostrowski@example.com", in_text("kai.ostrowski@example.com"))
    add("more", "4024007134564842", in_response("cc", "4024 0071 3456 4842"))
    add(
        "more", "leo.farrant@example.com", in_text('<a href="mailto:leo.farrant@example.com">x</a>')
    )
    add(
        "more",
        "mina.sorrel@example.com",
        in_text("bWluYS5zb3JyZWxAZXhhbXBsZS5jb20= is the id"),
        also=("bWluYS5zb3JyZWxAZXhhbXBsZS5jb20",),
    )

    # 10. bare names: no cue, no key, known nowhere else (``recognizers/bare_name.py``) ---------
    add(
        "bare", "Linnea Haverford", in_text("the refund was approved after Linnea Haverford called")
    )
    add(
        "bare",
        "Corwin T. Ashgrove",
        at("handoff", {"requested": True, "reason": "escalated for Corwin T. Ashgrove"}),
        also=("Ashgrove",),
    )
    add("bare", "Maren Lockwood-Pryce", in_answer("I have passed this to Maren Lockwood-Pryce."))
    add("bare", "Perpetua Skelding", in_text("Perpetua Skelding needs the invoice reissued"))
    add(
        "bare",
        "Ignatius Fairweather",
        in_response("note", '{"summary": "Ignatius Fairweather wants a callback"}'),
    )
    add("bare", "Adaeze Nwachukwu", in_text("Yesterday Adaeze Nwachukwu phoned about it"))
    add("bare", "Hope Castellanos", in_text("ok so Hope Castellanos will pick it up at noon"))
    add(
        "bare",
        "Ottoline Brackenbury",
        in_response("remarks", "spoke with Ottoline Brackenbury at the front desk"),
    )

    # 11. compatibility characters: full NFKC before detection ---------------------------------
    add(
        "compat",
        "ｍｅｉ．ｏｓｇｏｏｄ＠ｅｘａｍｐｌｅ．ｃｏｍ",
        in_text("mail ｍｅｉ．ｏｓｇｏｏｄ＠ｅｘａｍｐｌｅ．ｃｏｍ please"),
        also=("mei.osgood@example.com", "ｍｅｉ．ｏｓｇｏｏｄ"),
    )
    add(
        "compat",
        "ﬁona.ﬂetcher@example.org",
        in_text("send it to ﬁona.ﬂetcher@example.org today"),
        also=("fiona.fletcher@example.org", "etcher@example.org"),
    )
    add(
        "compat",
        "③①②-⑤⑤⑤-⓪①⑨⑦",
        in_text("call ③①②-⑤⑤⑤-⓪①⑨⑦ after six"),
        also=("312-555-0197", "3125550197", "⓪①⑨⑦"),
    )
    add(
        "compat",
        "⁶¹²-⁴⁰-⁷⁷⁸²",
        in_text("my ssn is ⁶¹²-⁴⁰-⁷⁷⁸² for the form"),
        also=("612-40-7782", "612407782", "⁷⁷⁸²"),
    )

    # 12. categories still leaking before the breadth work (dates of birth, places, national
    # ids, licences, phones in words, accounts beside a bank code, cards as JSON floats) -------
    handoff = lambda reason: at("handoff", {"requested": True, "reason": reason})  # noqa: E731
    add(
        "breadth",
        "9th of November 1983",
        handoff("verified via date of birth 9th of November 1983"),
        also=("November 1983",),
    )
    add("breadth", "23.02.1977", in_answer("Your DOB 23.02.1977 is on file."))
    add("breadth", "5. Mai 1968", in_text("ich bin geboren am 5. Mai 1968"), also=("Mai 1968",))
    add(
        "breadth",
        "53.4808, -2.2426",
        in_text("I'm stuck at 53.4808, -2.2426 near the bridge"),
        also=("53.4808", "2.2426"),
    )
    add(
        "breadth",
        "55.953251",
        in_response("position", {"lat": 55.953251, "lon": -3.188267}),
        also=("3.188267",),
    )
    add("breadth", "52.2053° N", in_answer("meet at 52.2053° N, 0.1218° E"), also=("52.2053",))
    add(
        "breadth",
        "jk 40 21 77 b",
        in_text("my national insurance number is jk 40 21 77 b"),
        also=("jk402177b", "JK402177B"),
    )
    add("breadth", "440304 19870615 1231", in_text("身份证 440304 19870615 1231 请核对"))
    add("breadth", "47-2918365", in_answer("Company EIN is 47-2918365"))
    add("breadth", "953-84-2716", in_text("ITIN 953-84-2716 for the refund"))
    add("breadth", "W4417286", in_text("driver license W4417286 from Texas"))
    add(
        "breadth",
        "PARKE 802166 LM8QR",
        in_response("note", "licence number PARKE 802166 LM8QR"),
        also=("PARKE802166LM8QR",),
    )
    add(
        "breadth",
        "1m8gdm9axkp042788",
        in_text("my car's vin 1m8gdm9axkp042788 was towed"),
        also=("1M8GDM9AXKP042788",),
    )
    add("breadth", "77120459", handoff("MRN: 77120459 flagged for review"))
    add(
        "breadth",
        "zero two zero seven nine four six one one two two",
        in_text("you can ring me on zero two zero seven nine four six one one two two"),
        also=("02079461122",),
    )
    add(
        "breadth",
        "O7911 l23456",
        in_text("text me at O7911 l23456 tonight"),
        also=("07911123456", "07911 123456"),
    )
    add("breadth", "88310274455", in_text("ACH to routing 121000358 acct 88310274455"))
    add("breadth", "51627384", in_answer("pay account 51627384 at BIC NWBKGB2L please"))
    add("breadth", "4532015112830366", in_response("card_number", 4532015112830366.0))
    return p


PROBES: list[Probe] = _probes()

_PLACEHOLDER = '"__RAW_RESPONSE__"'


def write_corpus(path: Path) -> dict[str, Probe]:
    """Write one JSONL file of probe recordings; returns record id -> probe."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    by_record: dict[str, Probe] = {}
    for n, probe in enumerate(PROBES):
        rec = base_record(n, probe.probe_id)
        probe.plant(rec)
        if probe.raw_response is not None:
            rec["toolCalls"][0]["response"] = "__RAW_RESPONSE__"
        line = json.dumps(rec, ensure_ascii=False)
        if probe.raw_response is not None:
            line = line.replace(_PLACEHOLDER, probe.raw_response)
        lines.append(line)
        by_record[str(rec["recordId"])] = probe
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return by_record
