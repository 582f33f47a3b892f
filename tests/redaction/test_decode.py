"""Decoding to a fixed point: every disguise of an e-mail address, phone or card is found, and
the finding covers the whole original token (no fragment of an encoded blob survives)."""

from __future__ import annotations

import base64
import re

import orjson
import pytest

from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.normalise import normalise
from golden_distill.redaction.redactor import Redactor

ADDRESS = "henrike.sollbach@brightmoor.net"
CC = "aurel.tamasi@quillfield.org"


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return TextAnalyzer(RedactionConfig())


def found(analyzer: TextAnalyzer, text: str, entity: str) -> list[str]:
    return [text[f.start : f.end] for f in analyzer.analyze(text, 0.3) if f.entity_type == entity]


def hexed(text: str) -> str:
    return text.encode().hex()


def _ps_command() -> str:
    script = f"Send-MailMessage -To '{ADDRESS}' -Subject report"
    return base64.b64encode(script.encode("utf-16-le")).decode()


PS = _ps_command()
B64_PCT = base64.b64encode(ADDRESS.replace("@", "%40").encode()).decode()

#: (text, the original span that must be found whole)
EMAIL_DISGUISES = [
    ("write henrike.sollbach(at)brightmoor.net today", "henrike.sollbach(at)brightmoor.net"),
    ("write henrike.sollbach (at) brightmoor.net", "henrike.sollbach (at) brightmoor.net"),
    (
        "mail henrike.sollbach [at] brightmoor [dot] net pls",
        "henrike.sollbach [at] brightmoor [dot] net",
    ),
    ("mail henrike.sollbach @ brightmoor.net pls", "henrike.sollbach @ brightmoor.net"),
    ("to: henrike.sollbach=40brightmoor.net", "henrike.sollbach=40brightmoor.net"),
    ("to: henrike.soll=\r\nbach=40brightmoor.net", "henrike.soll=\r\nbach=40brightmoor.net"),
    ("ref henrike.sollbach%2540brightmoor.net x", "henrike.sollbach%2540brightmoor.net"),
    ("ref henrike.sollbach%252540brightmoor.net x", "henrike.sollbach%252540brightmoor.net"),
    (f"blob {hexed(ADDRESS)} end", hexed(ADDRESS)),
    ("blob " + "".join("\\x" + h for h in re.findall("..", hexed(ADDRESS))) + " end", None),
    (f"powershell.exe -EncodedCommand {PS}", PS),
    (f"data {B64_PCT}", B64_PCT),
    (
        "<p>henrike.<b>sollbach</b>@bright<i>moor</i>.net</p>",
        "henrike.<b>sollbach</b>@bright<i>moor</i>.net",
    ),
    ("addr \u202eten.roomthgirb@hcabllos.ekirneh\u202c ok", None),
    ("mail henrike.sollbаch@brightmооr.net", "henrike.sollbаch@brightmооr.net"),  # Cyrillic а, о
    ("mail hen\u2067rike.sollbach@bright\u2069moor.net", None),  # bidi isolates
    ('note {\\"to\\": \\"henrike.sollbach\\\\u0040brightmoor.net\\"}', None),
    ('{\\\\\\"to\\\\\\": \\\\\\"henrike.sollbach\\\\\\\\u0040brightmoor.net\\\\\\"}', None),
]


@pytest.mark.parametrize(("text", "whole"), EMAIL_DISGUISES)
def test_every_email_disguise_is_found_as_its_whole_original_token(
    analyzer: TextAnalyzer, text: str, whole: str | None
) -> None:
    hits = found(analyzer, text, "EMAIL_ADDRESS")
    assert hits, text
    if whole is not None:
        assert whole in hits
    # nothing of the address is left outside the found spans
    rest = text
    for hit in sorted(hits, key=len, reverse=True):
        rest = rest.replace(hit, "")
    for fragment in ("henrike", "sollbach", "brightmoor", "sollb"):
        assert fragment not in rest, (text, rest)


def test_a_mailto_link_gives_every_address_of_its_query(analyzer: TextAnalyzer) -> None:
    for link in (
        f"mailto:{ADDRESS}?cc={CC}&subject=hello",
        f"mailto:{ADDRESS}?cc={CC.replace('@', '%40')}",
        f"mailto:{ADDRESS}?subject=x&bcc={CC}",
    ):
        hits = found(analyzer, f"<a href='{link}'>mail</a>", "EMAIL_ADDRESS")
        assert any(ADDRESS in h for h in hits), link
        assert any("aurel.tamasi" in h for h in hits), link
        # the addresses, not the whole link: the value can be scrubbed wherever else it is
        assert ADDRESS in hits, hits


@pytest.mark.parametrize(
    "text",
    [
        "call +1 4\u03011\u03015\u0301 555 0172 today",  # combining marks between digits
        "call +1 4\ufe0f\u20e31\ufe0f\u20e35\ufe0f\u20e3 555 0172",  # keycap digits
        "call +1 415 555 O172 today",  # O typed for 0
        "call +1 4l5 555 0l72 today",  # l typed for 1
        "call +1 \U0001d7d2\U0001d7cf\U0001d7d3 555 0172",  # mathematical digits
        "call +1 ４１５ ５５５ ０１７２",  # full-width
        "call +1 ٤١٥ ٥٥٥ ٠١٧٢ today",  # Arabic-Indic digits
        "call +1 ४१५ ५५५ ०१७२ today",  # Devanagari digits
    ],
)
def test_confusable_digits_are_read_as_digits(analyzer: TextAnalyzer, text: str) -> None:
    hits = found(analyzer, text, "PHONE_NUMBER")
    assert hits, text
    assert "0172" not in text or any("0172" in h for h in hits)


def test_homoglyphs_only_inside_latin_tokens_so_russian_text_is_left_alone() -> None:
    assert normalise("Меня зовут Анна, я из Москвы") is None
    norm = normalise("write to аnna.petrovа@mailbox.org")  # Cyrillic а at both ends
    assert norm is not None and "anna.petrova@mailbox.org" in norm.text


@pytest.mark.parametrize(
    "text",
    [
        "look at example.com for the manual",
        "meet at 10 @ the lobby",
        "limit=40&page=3D",
        "the Water Bottle is 1000ml, 15-inch, SKU 1O0",
        "checksum " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        '{"tracking_id": ["522129247270"], "item_ids": ["6679257"]}',  # digits are not hex text
        "payload " + base64.b64encode(bytes(range(48))).decode(),
    ],
)
def test_ordinary_text_gains_no_email_finding(analyzer: TextAnalyzer, text: str) -> None:
    assert found(analyzer, text, "EMAIL_ADDRESS") == []


def test_base64_of_nothing_personal_adds_no_finding(analyzer: TextAnalyzer) -> None:
    blob = base64.b64encode(b"status shipped, carrier ups, 2 items").decode()
    norm = normalise(f"x {blob}")
    assert norm is not None and "status shipped" in norm.text  # it was decoded
    decoded_only = {f.entity_type for f in analyzer.analyze(norm.text, 0.3)} - {
        f.entity_type for f in analyzer.analyze(f"x {blob}", 0.3)
    }
    assert not decoded_only & {"EMAIL_ADDRESS", "PERSON", "PHONE_NUMBER", "CREDIT_CARD"}


def test_numeric_ids_are_not_decoded_as_hex() -> None:
    assert normalise('{"tracking_id": ["522129247270"], "note": "a0b1c2d3e4f5"}') is None


def test_decoding_stops_at_a_fixed_point() -> None:
    at = "@"
    for _ in range(4):  # percent-encoded four times over: %25252540
        at = at.replace("%", "%25").replace("@", "%40")
    assert at == "%25252540"
    norm = normalise(f"mail orla{at}fenwick.example.com now")
    assert norm is not None and norm.text == "mail orla@fenwick.example.com now"
    assert normalise(norm.text) is None  # nothing left to undo


def test_the_redactor_removes_every_disguise_from_a_published_case(
    redactor: Redactor, make_case, make_step
) -> None:
    texts = [t for t, _ in EMAIL_DISGUISES]
    row = make_case(
        user_input=" | ".join(texts[:6]),
        steps=[
            make_step(0, "notes_get", {"id": "N-1"}, orjson.dumps({"body": t}).decode())
            for t in texts[6:]
        ],
    )
    result = redactor.redact(row)
    assert result.published, result.reason  # found and replaced, not refused
    out = orjson.dumps(result.row, default=str).decode()
    for fragment in ("henrike", "sollbach", "brightmoor", hexed(ADDRESS)[:20], PS[:20]):
        assert fragment not in out, fragment
