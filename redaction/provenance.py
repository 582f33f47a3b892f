"""The provenance rule: a case's recording path (``source.uri``) is owned, never scanned as text.

A recording path is lineage, not content: it tells a person holding the store which file a case
came from. It can still carry personal data (``/home/first.last/``, ``tenant=acme``,
``user=u-991``), and scanned as free text it made redaction refuse good cases: once the tenant
inside it was pseudonymised, the rest of the path read as a secret to the verifier. So the path is
rewritten by this rule, component by component, and nothing else touches it:

* a value the case already knows as a key or a personal value (its tenant, its user) takes the
  case's own substitute, so the path and the columns still agree;
* dates, times, numbers, ordinary lowercase English words (``data``, ``runs``, ``recordings``)
  and file extensions are kept, so the path stays readable;
* every other component (a name, a handle, an id nobody declared) becomes ``p`` + a keyed digest:
  the same component gives the same token in every case and every run with the same key, so two
  cases from one file still share a path, and nothing of the original can be read back.

The rule's output is made only of kept words and substitutes, so it cannot leak by itself; the
verifier still checks it for any value the case knows (``verify.verify_scrubbed`` ``owned``).
"""

from __future__ import annotations

import hmac
import re
from typing import Protocol

#: Location (list indices dropped) of the fields this rule owns.
PROVENANCE_FIELDS = frozenset({"source.uri"})

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SEPARATORS = re.compile(r"([/\\])")
_SAFE_VALUE = re.compile(r"^[\d._:+-]*$")  # dates, times, numbers, shard indices
_EXTENSION = re.compile(
    r"(?:\.(?:jsonl|json|ndjson|gz|zst|zstd|bz2|xz|parquet|csv|tsv|txt|log|db|sqlite|arrow))+$",
    re.IGNORECASE,
)
_TOKEN_SPLIT = re.compile(r"[-_.\s]+")
#: Partition keys whose name is a word (``dt``, ``tenant``): the key is kept, its value judged.
_PARTITION_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
DIGEST_CHARS = 12


class KnownValues(Protocol):
    """What the rule asks of the case's propagator (``propagation.Propagator``)."""

    def label_of(self, text: str) -> str | None: ...
    def substitute(self, text: str) -> str: ...
    def find(self, text: str) -> list[tuple[int, int, str]]: ...


#: Folder and file words of recording stores that the English list lacks or also lists as a
#: surname ("data", "home"): kept as they are.
PATH_WORDS = frozenset(
    {
        "data",
        "home",
        "srv",
        "var",
        "tmp",
        "opt",
        "mnt",
        "usr",
        "src",
        "rec",
        "recs",
        "recordings",
        "logs",
        "log",
        "exports",
        "export",
        "runs",
        "run",
        "raw",
        "prod",
        "dev",
        "staging",
        "stage",
        "bucket",
        "buckets",
        "shards",
        "shard",
        "part",
        "parts",
        "dt",
        "sessions",
        "traces",
        "simulations",
        "results",
        "archive",
        "backup",
        "nightly",
        "daily",
        "hourly",
        "tenants",
        "users",
        "events",
        "spans",
        "",
    }
)


def _ordinary(token: str) -> bool:
    """Digits, a known path word, or a lowercase English word (inflections too) that is not
    also a given name or a surname."""
    if token.isdigit() or token in PATH_WORDS:
        return True
    if not (token.islower() and len(token) >= 2):
        return False
    from golden_distill.redaction.recognizers.name_lexicon import lexicon

    lex = lexicon()
    return lex.is_word(token) and not (lex.is_given(token) or lex.is_surname(token))


def _digest(secret: bytes, text: str) -> str:
    mac = hmac.new(secret, b"provenance\x00" + text.encode("utf-8", "surrogatepass"), "sha256")
    return "p" + mac.hexdigest()[:DIGEST_CHARS]


def _value(text: str, known: KnownValues, secret: bytes) -> str:
    if not text or _SAFE_VALUE.match(text):
        return text
    if known.label_of(text) is not None:
        return known.substitute(text)
    ext = _EXTENSION.search(text)
    stem = text[: ext.start()] if ext else text
    suffix = ext.group(0) if ext else ""
    if not stem:
        return text
    if not known.find(stem) and all(_ordinary(t) for t in _TOKEN_SPLIT.split(stem) if t):
        return text  # ordinary words, and none of them a value the case knows
    return _digest(secret, stem) + suffix


def _component(part: str, known: KnownValues, secret: bytes) -> str:
    key, eq, value = part.partition("=")
    if eq and _PARTITION_KEY.match(key):
        return f"{key}={_value(value, known, secret)}"
    return _value(part, known, secret)


def provenance_uri(uri: str, known: KnownValues, secret: bytes) -> str:
    """``uri`` with every component that could identify someone replaced (see the module doc).

    ``known``: the case's values known as keys or personal (their substitutes). The scheme
    (``s3://``) and the separators are kept."""
    head = _SCHEME.match(uri)
    prefix = head.group(0) if head else ""
    parts = _SEPARATORS.split(uri[len(prefix) :])
    return prefix + "".join(
        p if p in ("/", "\\", "", ".", "..") else _component(p, known, secret) for p in parts
    )
