"""Normalise before detecting: each layer, and findings mapped back to whole original tokens."""

from __future__ import annotations

import base64
import re

import pytest

from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.normalise import decode_base64, normalise

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


@pytest.mark.parametrize(
    ("text", "original"),
    [
        ("write to lena.morrow%40example.org please", "lena.morrow%40example.org"),
        ("mail perry.dunmoor&#64;example.org today", "perry.dunmoor&#64;example.org"),
        ("mail cora.linwood&commat;example.com now", "cora.linwood&commat;example.com"),
        ("reach wilma.stroud at example dot com soon", "wilma.stroud at example dot com"),
    ],
)
def test_encoded_addresses_map_back_to_their_original_span(text: str, original: str) -> None:
    norm = normalise(text)
    assert norm is not None
    m = EMAIL.search(norm.text)
    assert m is not None
    start, end = norm.original_span(m.start(), m.end())
    assert text[start:end] == original


def test_full_width_and_zero_width_digits_map_back_to_the_whole_token() -> None:
    card = "4111111111111111"
    full = "".join(chr(0xFF10 + int(d)) for d in card)
    for text, token in ((f"card {full} ok", full), ("card " + "\u200b".join(card), None)):
        norm = normalise(text)
        assert norm is not None and card in norm.text
        i = norm.text.index(card)
        start, end = norm.original_span(i, i + len(card))
        assert text[start:end] == (token or text[5:])  # every original character, none left


def test_base64_runs_that_decode_to_text_are_scanned_binary_ones_are_not() -> None:
    run = base64.b64encode(b"contact gail.ostrander@example.com for it").decode()
    norm = normalise(f"attachment {run}")
    assert norm is not None and "gail.ostrander@example.com" in norm.text
    assert decode_base64("A" * 64) is None  # zeros: binary, not text


def test_plain_text_and_chinese_are_left_alone() -> None:
    assert normalise("order ORD-1 shipped for 120.50 on 2026-12-01") is None
    assert normalise("调一下员工王成的档案，谢谢！") is None


def test_the_analyzer_finds_what_only_the_normalised_form_shows() -> None:
    analyzer = TextAnalyzer(RedactionConfig())
    text = "card 4 0 1 2 8 8 8 8 8 8 8 8 1 8 8 1 declined"
    found = {(f.entity_type, text[f.start : f.end]) for f in analyzer.analyze(text, 0.3)}
    assert ("CREDIT_CARD", "4 0 1 2 8 8 8 8 8 8 8 8 1 8 8 1") in found


@pytest.mark.parametrize(
    ("text", "plain", "original"),
    [
        # full-width letters in an e-mail
        ("mail ｍｅｉ．ｏｓｇｏｏｄ＠ｅｘａｍｐｌｅ．ｃｏｍ ok", "mei.osgood@example.com", None),
        ("send ﬁona.ﬂetcher@example.org now", "fiona.fletcher@example.org", None),  # ligatures
        ("call ③①②-⑤⑤⑤-⓪①⑨⑦ soon", "312-555-0197", None),  # circled digits
        ("ssn ⁶¹²-⁴⁰-⁷⁷⁸² here", "612-40-7782", None),  # superscript digits
    ],
)
def test_compatibility_characters_are_nfkc_normalised_and_mapped_back(
    text: str, plain: str, original: str | None
) -> None:
    norm = normalise(text)
    assert norm is not None and plain in norm.text
    i = norm.text.index(plain)
    start, end = norm.original_span(i, i + len(plain))
    token = text.split(" ")[1]
    assert text[start:end] == (original or token)  # the whole original token, nothing left


def test_the_analyzer_finds_values_written_in_compatibility_characters() -> None:
    analyzer = TextAnalyzer(RedactionConfig())
    for text, entity in (
        ("mail ｍｅｉ．ｏｓｇｏｏｄ＠ｅｘａｍｐｌｅ．ｃｏｍ ok", "EMAIL_ADDRESS"),
        ("send ﬁona.ﬂetcher@example.org now", "EMAIL_ADDRESS"),
        ("call ③①②-⑤⑤⑤-⓪①⑨⑦ soon", "PHONE_NUMBER"),
    ):
        found = {(f.entity_type, text[f.start : f.end]) for f in analyzer.analyze(text, 0.3)}
        assert (entity, text.split(" ")[1]) in found, (text, found)


def test_chinese_punctuation_alone_does_not_trigger_a_second_analysis() -> None:
    assert normalise("您好，请问：订单（三件）到了吗？") is None
    norm = normalise("电话：１３８１２３４５６７８，谢谢")  # full-width digits still are
    assert norm is not None and "13812345678" in norm.text and "，" in norm.text


def test_the_cheap_trigger_never_changes_a_result() -> None:
    """``normalise`` returns ``None`` at once for text its trigger regex does not match; every
    text must normalise exactly as running all layers would (edges of each trigger part: dates
    and prices with fewer than three digit separators, NBSP and non-ASCII digits, ``\\U``
    escapes, letters that a case-insensitive class folds (ſ, K, ı, İ) inside long runs,
    upper-case "AT"/"DOT")."""
    from adversarial import adversarial_corpus

    from golden_distill.redaction.normalise import apply_layers

    texts = [
        "on 2024-05-01 at 10:30",
        "total 1.234.567,89 EUR",
        "call 4 1 1 1 2 2 2",
        "call 415 555 0100 now",
        "id 1\u00a02\u00a03\u00a04\u00a05\u00a06\u00a07",
        "\u0661\u0662\u0663-\u0664\u0665\u0666-\u0667\u0668\u0669-\u0660",
        "x \\U0041 \\u0041\\u0042 %4A &#64; &amp; &AMP;",
        "token abcdefghıjklmnopqrstu and ſſſſſſſſſſſſſſſſſſ or KKKKKKKKKKKKKKKKKK",
        "run İİİİİİİİİİİİİİİİİİ end",
        "mail JOHN.DOE AT EXAMPLE DOT COM",
        "mail john [at] example [dot] com",
        "mail john (AT) example (dot) org",
        "bWVpLmJyb3duQGV4YW1wbGUuY29t",
        "eyJlbWFpbCI6Im1laUBleGFtcGxlLmNvbSJ9",
        "a\u200bb\u200dc 4\u200b1\u200b1\u200b1",
        "ﬁle ① ＡＢＣ１２３ ～ 。，",
        "plain words only",
        "",
    ]
    for probe in adversarial_corpus().PROBES:
        for form in probe.forms():
            texts.extend([form, f"reach me at {form} today", f'{{"v": "{form}"}}'])
        if probe.raw_response:
            texts.append(probe.raw_response)
    for text in texts:
        assert normalise(text) == apply_layers(text), text
