"""Placeholders for the user text: the tokens that differ between otherwise identical requests.

Two requests that differ only in an order id, an amount, a date or a customer's name are the same
request for replay purposes. Each recognizer below names one kind of such token and the pattern
that finds it (Presidio style: small, declarative, applied in the configured order). The patterns
run as Rust regexes inside polars, so normalising 200k requests takes well under a second.

Dedup runs before redaction, on the unredacted funnel candidates, so it sees original values; the
``pseudonym`` recognizer is named for the prefix-kept id formats (``ORD-…``, ``#W…``) that original
ids and redaction's pseudonyms share, and the ``id`` recognizer takes any other token mixing
letters and digits. Names come from
Faker's bundled first/last-name lists (local data; nothing is downloaded); they are matched only
when capitalised, so ordinary lower-case words are left alone.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache

import polars as pl

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)

#: Faker locales whose name lists are used for the ``name`` placeholder.
NAME_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL")


@dataclass(frozen=True, slots=True)
class Recognizer:
    """One kind of variable token: where it is found and what replaces it."""

    kind: str
    pattern: str  # Rust regex syntax (polars)
    placeholder: str


def _ordered(*patterns: str) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


RECOGNIZERS: dict[str, Recognizer] = {
    r.kind: r
    for r in (
        # Redaction placeholders such as <PERSON> or [EMAIL_ADDRESS] become one token each.
        # Redaction stand-ins (<PERSON>, <PERSON_1a2b3c4d>, [EMAIL_ADDRESS]) become one token per
        # entity type: different people's stand-ins compare equal, like different names do.
        Recognizer(
            "redacted",
            r"<([A-Z][A-Z_]{0,40}?)(?:_[0-9a-f]{6,16})?>|\[([A-Z][A-Z_]{1,40})\]",
            " _${1}${2}_ ",
        ),
        Recognizer("email", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", " _email_ "),
        Recognizer("url", r"(?i)\b(?:https?://|www\.)[^\s<>\"']+", " _url_ "),
        Recognizer(
            "date",
            _ordered(
                r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                r"(?:Z|[+-]\d{2}:?\d{2})?)?",
                r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",
                rf"(?i)\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b",
                rf"(?i)\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b(?:,?\s+\d{{4}})?",
            ),
            " _date_ ",
        ),
        Recognizer(
            "phone",
            r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\b\d{2,4}[\s.-]\d{3,4}(?:[\s.-]\d{2,4})?\b",
            " _phone_ ",
        ),
        # Prefix-kept formats: ORD-8F2K1Q, INV_0042, #W2378156, acct:9f8e...
        Recognizer(
            "pseudonym",
            r"#[A-Za-z0-9][\w-]{2,}|\b[A-Za-z]{1,8}[-_:][A-Za-z0-9]*\d[\w-]*\b|\b[A-Z]{2,8}-[A-Z0-9]{3,}\b",
            " _id_ ",
        ),
        # Any token mixing letters and digits (user ids, uuids, sku codes...).
        Recognizer("id", r"\b[A-Za-z_][\w-]*\d[\w-]*\b|\b\d[\w-]*[A-Za-z_][\w-]*\b", " _id_ "),
        Recognizer(
            "currency", r"\b(?:USD|EUR|GBP|CNY|RMB|JPY|CHF|CAD|AUD|HKD|SGD|INR)\b", " _cur_ "
        ),
        Recognizer("number", r"[$€£¥]?\s?\d[\d,]*(?:\.\d+)?%?", " _num_ "),
    )
}


@cache
def name_pattern() -> str:
    """A regex matching capitalised first and last names from Faker's bundled lists."""
    names: set[str] = set()
    for locale in NAME_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for attr in ("first_names", "first_names_male", "first_names_female", "last_names"):
            names.update(getattr(provider, attr, None) or ())
    usable = sorted(
        (n for n in names if n[:1].isupper() and re.fullmatch(r"[^\W\d_][\w'-]*", n)),
        key=lambda s: (-len(s), s),  # longest first, so "Anna-Lena" wins over "Anna"
    )
    return r"\b(?:" + "|".join(re.escape(n) for n in usable) + r")\b"


def normalise_text_expr(column: str | pl.Expr, kinds: list[str] | tuple[str, ...]) -> pl.Expr:
    """A polars expression: the text with each configured kind replaced, lower-cased, tidied.

    Punctuation becomes space (it is noise for n-grams), CJK characters become one token each
    (those scripts do not separate words with spaces) and whitespace is collapsed, so two
    requests that differ only in placeholders and spacing normalise to the same string.
    """
    expr = pl.col(column) if isinstance(column, str) else column
    # CJK text has no spaces: one token per character (so word n-grams become character
    # n-grams there), which also gives the recognizers below the word boundaries they need.
    expr = expr.fill_null("").str.replace_all(
        r"(\p{Han}|\p{Hiragana}|\p{Katakana}|\p{Hangul}|[\u3000-\u303f\uff00-\uffef])", " $1 "
    )
    redacted = RECOGNIZERS["redacted"]
    expr = expr.str.replace_all(redacted.pattern, redacted.placeholder)
    for kind in kinds:
        if kind == "name":
            expr = expr.str.replace_all(name_pattern(), " _name_ ")
        else:
            rec = RECOGNIZERS[kind]
            expr = expr.str.replace_all(rec.pattern, rec.placeholder)
    return (
        expr.str.to_lowercase()
        .str.replace_all(r"[^\w\s]+", " ")
        .str.replace_all(r"\s+", " ")
        .str.strip_chars()
    )


def normalise_text(text: str | None, kinds: list[str] | tuple[str, ...]) -> str:
    """The normalised form of one text (same rules as ``normalise_text_expr``)."""
    frame = pl.DataFrame({"t": [text]}, schema={"t": pl.String})
    return frame.select(normalise_text_expr("t", kinds)).item()
