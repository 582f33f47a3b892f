"""Secrets from a maintained ruleset: detect-secrets' plugins wrapped as one Presidio recognizer.

Why detect-secrets: its plugins (AWS, Slack, Stripe, JWT, GitHub, GitLab, SendGrid, Twilio,
private keys, keywords, high-entropy strings...) are kept up to date by people who track
credential formats; hand-written regexes here went stale. The plugins are called directly on the
(normalised) text, never through detect-secrets' file scanner, and only on strings the cheap
pre-filter says could hold a secret. A plugin yields a secret's value (sometimes a part of it:
``ghp`` for a GitHub token, the header of a PEM block); the span is widened to the whole token
(to the end of the block for private keys).

What the ruleset does not cover, added here and documented as such: credentials inside
connection URLs (``postgres://user:pw@host``: both user and password), ``Basic``/``Bearer``
header values, key-led values without quotes (``api_key=...``, ``password is ...``), Google
``AIza`` keys and ``sk-``/``npm_`` style tokens, and unquoted high-entropy tokens measured with
detect-secrets' own entropy functions and limits.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.metadata import version

import detect_secrets
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins import keyword as ds_keyword
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from presidio_analyzer import EntityRecognizer, RecognizerResult

from golden_distill.redaction.recognizers.base import AnyOf, Keywords, RecognizerSpec

ENTITY = "SECRET"
#: detect-secrets plugins not used: a public IP is personal data (``ip_address``), not a secret.
_SKIPPED = frozenset({"Public IP (ipv4)"})
_TOKEN = re.compile(r"[A-Za-z0-9+/_.\-~!#$%^&*]")
_TOKEN_STRICT = re.compile(r"[A-Za-z0-9+/=_\-~]")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")
_CONTEXT_PATTERNS = (
    # credentials in connection URLs: user and password
    re.compile(
        r"(?<![A-Za-z0-9])[a-z][a-z0-9+.\-]{1,20}://(?P<v>[^\s:/@]+):(?P<p>[^\s@/]+)@", re.I
    ),
    # header credentials
    re.compile(r"(?i:\b(?:basic|bearer|token))[ \t]+(?P<v>[A-Za-z0-9\-._~+/]{8,}=*)"),
    # key-led values: api_key=..., password is ..., "secret": "..."
    re.compile(
        r"(?i:(?:pass(?:word|wd|code)?|pwd|secret|token|api[_\- ]?key|access[_\- ]?key"
        r"|auth(?:orization)?|credentials?|密码|口令))[\"']?(?:[ \t]{0,3}(?:[=:：]|\bis\b)"
        r"[ \t]{0,3})[\"']?(?P<v>[^\s\"',;&，。\u4e00-\u9fff]{6,})"
    ),
    # well-known prefixes the ruleset lacks
    re.compile(
        r"(?<![A-Za-z0-9])(?P<v>(?:AIza[0-9A-Za-z_\-]{30,}|sk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{20,}"
        r"|npm_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}))"
    ),
)
#: Unquoted tokens judged by detect-secrets' entropy limits (letters and digits mixed).
_ENTROPY_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{20,}")
_WORDS = ("key", "secret", "token", "pass", "pwd", "auth", "bearer", "basic", "credential")
_WORDS += ("xox", "sk_", "密码", "口令")
#: A long run may not start right after "<": value tokens (<EMAIL_ADDRESS_1a2b3c4d>) are ours.
#: The words are matched case-insensitively (as ``(?i:key|secret|...)`` was, at a quarter of
#: the cost).
_PREFILTER = AnyOf(
    re.compile(r"(?<![<A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{16,}"),
    "://",
    "-----BEGIN",
    Keywords(*_WORDS),
)


#: What every regex of detect-secrets' keyword plugin needs (as it is called here: no file type,
#: no ``keyword_exclude``): one of its deny-listed words and a quote. Each deny-listed word holds
#: one of these literally (``api_?key``: "key"; ``db_?pass``: "pass"), matched case-insensitively
#: on the folded text (``Keywords``); ``keyword_gate_is_sound`` checks both against the plugin.
_KEYWORD_WORDS = ("key", "pass", "pwd", "secret", "contrase")
_KEYWORD_QUOTES = ("'", '"', "`")


def keyword_gate_is_sound() -> bool:
    """True when the gate above provably lets in every text the keyword plugin can match: each
    of its regexes starts or ends its deny-list group with those words and holds a required
    quote group; otherwise (a newer detect-secrets) the plugin runs on every text."""
    quote_group = f"({ds_keyword.QUOTE})"
    regexes = list(ds_keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    words_ok = all(any(w in entry for w in _KEYWORD_WORDS) for entry in ds_keyword.DENYLIST)
    group = "|".join(ds_keyword.DENYLIST)
    return (
        words_ok
        and ds_keyword.QUOTE == "[\\'\"`]"
        and all(quote_group in r.pattern and f"({group})" in r.pattern for r in regexes)
    )


_KEYWORD_GATE = Keywords(*_KEYWORD_WORDS) if keyword_gate_is_sound() else None


def _keyword_plugin_may_match(text: str) -> bool:
    if _KEYWORD_GATE is None:
        return True
    return any(q in text for q in _KEYWORD_QUOTES) and _KEYWORD_GATE.search(text)


@lru_cache(maxsize=1)
def ruleset() -> tuple[BasePlugin, ...]:
    """The detect-secrets plugins (instances), in its own order."""
    plugins = []
    for secret_type, cls in get_mapping_from_secret_type_to_class().items():
        if secret_type not in _SKIPPED:
            plugins.append(cls())
    return tuple(plugins)


def ruleset_version() -> str:
    """``detect-secrets <version>`` plus the plugin names, for the manifest."""
    version = getattr(detect_secrets, "__version__", None) or _dist_version()
    return f"detect-secrets {version}"


def _dist_version() -> str:

    return version("detect-secrets")


def plugin_names() -> list[str]:
    return [type(p).__name__ for p in ruleset()]


def _widen(text: str, start: int, end: int, chars: re.Pattern[str]) -> tuple[int, int]:
    while start > 0 and chars.match(text[start - 1]):
        start -= 1
    while end < len(text) and chars.match(text[end]):
        end += 1
    return start, end


def _mixed(token: str) -> bool:
    return any(c.isdigit() for c in token) and sum(c.isalpha() for c in token) >= 4


@lru_cache(maxsize=64)
def _kind(cls: type) -> tuple[bool, bool, bool]:
    """(keyword plugin, high-entropy plugin, private-key plugin) for a plugin class: worked out
    once per class (the plugins' base class is an ABC, whose ``isinstance`` costs a
    microsecond or two, three times per plugin per text)."""
    return (
        issubclass(cls, KeywordDetector),
        issubclass(cls, Base64HighEntropyString | HexHighEntropyString),
        issubclass(cls, PrivateKeyDetector),
    )


def find_secrets(text: str) -> list[tuple[int, int]]:
    """Spans of secrets in ``text`` (ruleset hits widened to whole tokens, plus the extras)."""
    spans: set[tuple[int, int]] = set()
    for plugin in ruleset():
        keyword, entropy, private_key = _kind(type(plugin))
        if keyword and plugin.keyword_exclude is None and not _keyword_plugin_may_match(text):
            continue  # its regexes all need a deny-listed word and a quote (gate above)
        for value in plugin.analyze_string(text):
            if not value:
                continue
            # the high-entropy plugins yield every quoted string; their limit is applied by
            # detect-secrets' line scanner, which is not used here
            if entropy and plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
                continue
            pos = text.find(value)
            while pos >= 0:
                if private_key:
                    end_m = _PEM_END.search(text, pos)
                    spans.add((max(0, pos - 5), end_m.end() if end_m else len(text)))
                else:
                    chars = _TOKEN_STRICT if entropy else _TOKEN
                    spans.add(_widen(text, pos, pos + len(value), chars))
                pos = text.find(value, pos + len(value))
    for pattern in _CONTEXT_PATTERNS:
        for m in pattern.finditer(text):
            spans.add((m.start("v"), m.end("v")))
            if "p" in pattern.groupindex:  # a URL's user and password: separate values
                spans.add((m.start("p"), m.end("p")))
    b64, hexa = _entropy_plugins()
    for m in _ENTROPY_CANDIDATE.finditer(text):
        token = m.group(0)
        if not _mixed(token):
            continue
        is_hex = all(c in "0123456789abcdefABCDEF" for c in token)
        plugin = hexa if is_hex else b64
        if plugin.calculate_shannon_entropy(token) > plugin.entropy_limit:
            spans.add((m.start(), m.end()))
    return sorted(spans)


@lru_cache(maxsize=1)
def _entropy_plugins() -> tuple[Base64HighEntropyString, HexHighEntropyString]:
    return Base64HighEntropyString(), HexHighEntropyString()


class SecretsRecognizer(EntityRecognizer):
    """Presidio recognizer over the detect-secrets ruleset (entity ``SECRET``)."""

    def __init__(self) -> None:
        super().__init__(supported_entities=[ENTITY], name="DetectSecretsRecognizer")

    def load(self) -> None:
        ruleset()

    def analyze(self, text, entities, nlp_artifacts=None):  # type: ignore[no-untyped-def]
        return [
            RecognizerResult(ENTITY, start, end, 0.9)
            for start, end in find_secrets(text)
            if end > start
        ]


SPEC = RecognizerSpec(
    name="secrets",
    entities=(ENTITY,),
    prefilter=_PREFILTER,
    build=lambda cfg: SecretsRecognizer(),
)
