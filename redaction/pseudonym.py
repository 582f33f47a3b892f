"""Keyed pseudonyms (HMAC-SHA256), exposed to Presidio as a custom anonymizer Operator.

Why not Presidio's ``hash`` operator: since 2.2.361 it salts randomly per entity unless given a
salt, and a salted SHA is not an HMAC; replay needs the *same* pseudonym for the same value in
every step, case, shard and nightly version, and only holders of the secret may compute it.

Two shapes:

* primary keys keep their format: a configured prefix (``#W``, ``ORD-``) stays, every other letter
  or digit is replaced by one of the same class (digit, lower, upper) and punctuation stays, so
  ``#W2378156`` becomes ``#W8301945`` and a validator for ``#W\\d{7}`` still accepts it. Keys are
  namespaced by key type, so an order and a user with the same text get unrelated pseudonyms.
  Format-keeping means a small space (10^7 for seven digits): two originals can share a
  pseudonym in large sets (birthday bound, ~n^2/2*10^7); give short keys a prefix-free shape or
  accept the bound (docs/privacy.md);
* other personal values become ``<ENTITY_TYPE_1a2b3c4d>`` (case-insensitive in the value), a token
  no recognizer fires on, stable so the same name reads the same in every place it was.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from functools import lru_cache
from typing import Any

from presidio_anonymizer.operators import Operator, OperatorType

from golden_distill.redaction.keys import MIN_KEY_BYTES
from golden_distill.redaction.recognizers.date_formats import keyed_date

OPERATOR_NAME = "keyed_pseudonym"
_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()


_ROUNDS = 8
_ROUND_BYTES = tuple(bytes([r]) for r in range(_ROUNDS))


@lru_cache(maxsize=4096)
def _round_key(secret: bytes, tweak: bytes) -> tuple[Any, ...]:
    """Keyed BLAKE2b prototypes for one (key, domain), one per round with the round's byte
    already absorbed: the key is an HMAC-SHA256 of the domain under the secret, so a round
    costs one small hash (copied, never re-keyed)."""
    subkey = hmac.new(secret, b"fpe-round-key\x00" + tweak, hashlib.sha256).digest()
    protos = []
    for r in _ROUND_BYTES:
        proto = hashlib.blake2b(key=subkey, digest_size=16)
        proto.update(r)
        protos.append(proto)
    return tuple(protos)


def _radices(rest: str) -> list[int]:
    return [10 if ch.isdigit() else 26 if ch.isascii() and ch.isalpha() else 1 for ch in rest]


def _rank(rest: str, radices: list[int]) -> int:
    n = 0
    for ch, radix in zip(rest, radices, strict=True):
        if radix == 10:
            n = n * 10 + (ord(ch) - 48)
        elif radix == 26:
            n = n * 26 + (ord(ch.lower()) - 97)
    return n


def _unrank(n: int, rest: str, radices: list[int]) -> str:
    out = []
    for ch, radix in zip(reversed(rest), reversed(radices), strict=True):
        if radix == 1:
            out.append(ch)
            continue
        n, d = divmod(n, radix)
        if radix == 10:
            out.append(_DIGITS[d])
        else:
            out.append(_UPPER[d] if ch.isupper() else _LOWER[d])
    return "".join(reversed(out))


#: ASCII character -> its class in a value's shape: digit, lower or upper letter (other
#: characters stay themselves: they are kept as they are and do not count)
_KIND = str.maketrans({**dict.fromkeys(_DIGITS, "9"), **dict.fromkeys(_LOWER, "a"),
                       **dict.fromkeys(_UPPER, "A")})  # fmt: skip
#: lower-case letter -> its base-26 digit as ``int(text, 26)`` reads it
_TO_BASE26 = str.maketrans(_LOWER, "0123456789abcdefghijklmnop")
#: every two-letter string by its base-26 value (0 = "aa")
_LOWER_PAIRS = tuple(a + b for a in _LOWER for b in _LOWER)
_UPPER_PAIRS = tuple(a + b for a in _UPPER for b in _UPPER)


class _Domain:
    """The keyed permutation of every value of one shape (its radices per character, the key
    type and the kept prefix): the domain's size, the Feistel rounds over it, and where a
    leading digit sits. Subclasses give a value's rank in the domain and back."""

    __slots__ = ("half", "lead", "mask", "protos", "size", "width")

    def __init__(self, secret: bytes, key_type: str, kept: str, radices: list[int]) -> None:
        self.size = 1
        for radix in radices:
            self.size *= radix
        bits = max(2, (self.size - 1).bit_length())
        bits += bits % 2
        self.half = bits // 2
        self.mask = (1 << self.half) - 1
        self.width = (self.half + 7) // 8
        tweak = f"fpe\x1f{key_type}\x1f{kept}\x1f{''.join(map(str, radices))}".encode()
        self.protos = _round_key(secret, tweak)
        lead = next((i for i, r in enumerate(radices) if r != 1), None)
        #: the first digit's position when the value (no kept prefix) starts with a digit
        self.lead = lead if lead is not None and radices[lead] == 10 and not kept else None

    def rank(self, rest: str) -> int:
        raise NotImplementedError

    def unrank(self, n: int) -> str:
        raise NotImplementedError


class _Shape(_Domain):
    """An ASCII shape (``AAAA-99999999``), worked out once: its runs of one class, so a
    value's rank and unrank are a few ``int()`` and format calls instead of a loop per
    character (``key_pseudonym`` is called for every key a run publishes)."""

    __slots__ = ("literals", "runs")

    def __init__(self, secret: bytes, key_type: str, kept: str, kinds: str) -> None:
        super().__init__(
            secret, key_type, kept, [10 if k == "9" else 26 if k in "aA" else 1 for k in kinds]
        )
        #: (start, end, radix, block, upper) per run of one class; literals around them
        self.runs: list[tuple[int, int, int, int, bool]] = []
        self.literals: list[str] = []
        at = 0
        for run in re.finditer(r"9+|a+|A+", kinds):
            start, end = run.span()
            radix = 10 if kinds[start] == "9" else 26
            self.literals.append(kinds[at:start])
            self.runs.append((start, end, radix, radix ** (end - start), kinds[start] == "A"))
            at = end
        self.literals.append(kinds[at:])

    def rank(self, rest: str) -> int:
        n = 0
        for start, end, radix, block, upper in self.runs:
            part = rest[start:end]
            if radix == 10:
                n = n * block + int(part)
            else:
                n = n * block + int((part.lower() if upper else part).translate(_TO_BASE26), 26)
        return n

    def unrank(self, n: int) -> str:
        parts = [self.literals[-1]]
        for (start, end, radix, block, upper), literal in zip(
            reversed(self.runs), reversed(self.literals[:-1]), strict=True
        ):
            n, value = divmod(n, block)
            if radix == 10:
                parts.append(f"{value:0{end - start}d}")
            else:  # two letters per step, from the right; an odd length leaves the first
                pairs = _UPPER_PAIRS if upper else _LOWER_PAIRS
                chars = []
                for _ in range((end - start) // 2):
                    value, d = divmod(value, 676)
                    chars.append(pairs[d])
                if (end - start) % 2:
                    chars.append((_UPPER if upper else _LOWER)[value])
                parts.append("".join(reversed(chars)))
            parts.append(literal)
        return "".join(reversed(parts))


class _CharShape(_Domain):
    """The shape of one value with non-ASCII characters, one character at a time
    (``str.isdigit`` counts other scripts' digits as digits, with the rank of ``ord - 48``)."""

    __slots__ = ("radices", "rest")

    def __init__(self, secret: bytes, key_type: str, kept: str, rest: str) -> None:
        self.rest, self.radices = rest, _radices(rest)
        super().__init__(secret, key_type, kept, self.radices)

    def rank(self, rest: str) -> int:
        return _rank(rest, self.radices)

    def unrank(self, n: int) -> str:
        return _unrank(n, self.rest, self.radices)


@lru_cache(maxsize=4096)
def _shape(secret: bytes, key_type: str, kept: str, kinds: str) -> _Shape:
    return _Shape(secret, key_type, kept, kinds)


@lru_cache(maxsize=1 << 16)
def key_pseudonym(
    value: str, key_type: str, secret: bytes, prefix: str | None = None, widen: int = 0
) -> str:
    """Format-keeping pseudonym of a primary key value (deterministic in key, type and value).

    A keyed permutation (format-preserving: Feistel over the value's mixed-radix rank, cycle
    walking) of every value with the same shape, so two different values of one key type never
    share a pseudonym. Cycle walking also keeps a leading non-zero digit non-zero and never lets
    an unprefixed value's pseudonym start with a configured prefix. ``widen`` appends that many
    digits first (``CollisionGuard``: a pseudonym that equals another original is widened).

    An ASCII value takes its shape's precomputed runs (``_Shape``), any other the character
    loop (``_CharShape``): both give the same pseudonym (tests/redaction/test_pseudonym.py
    compares them)."""
    kept = ""
    prefix_re = _compiled(prefix) if prefix else None
    if prefix_re is not None:
        match = prefix_re.match(value)
        if match:
            kept = match.group(0)
    rest = value[len(kept) :] + "0" * widen
    if not rest.isascii():
        return _generic_pseudonym(value, key_type, secret, prefix, widen, kept, rest, prefix_re)
    shape = _shape(secret, key_type, kept, rest.translate(_KIND))
    return _walk(value, key_type, secret, prefix, widen, kept, rest, prefix_re, shape)


def _generic_pseudonym(
    value: str,
    key_type: str,
    secret: bytes,
    prefix: str | None,
    widen: int,
    kept: str,
    rest: str,
    prefix_re: re.Pattern[str] | None,
) -> str:
    """``key_pseudonym`` through the character loop (``_CharShape``), whatever the value."""
    shape = _CharShape(secret, key_type, kept, rest)
    return _walk(value, key_type, secret, prefix, widen, kept, rest, prefix_re, shape)


def _walk(
    value: str,
    key_type: str,
    secret: bytes,
    prefix: str | None,
    widen: int,
    kept: str,
    rest: str,
    prefix_re: re.Pattern[str] | None,
    shape: _Domain,
) -> str:
    """Cycle walking: Feistel permutations (keyed BLAKE2b rounds: round ``r`` hashes its byte
    ``r`` and the right half) until the result is in the domain and fits the format."""
    size = shape.size
    if size <= 1:
        return kept + rest
    lead = shape.lead
    lead_nonzero = lead is not None and rest[lead] != "0"
    check_prefix = not kept and prefix_re is not None
    x = shape.rank(rest)
    half, mask, width, protos = shape.half, shape.mask, shape.width, shape.protos
    from_bytes = int.from_bytes
    for _ in range(1 << 16):
        left, right = x >> half, x & mask
        for proto in protos:
            h = proto.copy()
            h.update(right.to_bytes(width, "big"))
            left, right = right, left ^ (from_bytes(h.digest(), "big") & mask)
        x = (left << half) | right
        if x < size:
            candidate = shape.unrank(x)
            if lead is not None and (candidate[lead] != "0") != lead_nonzero:
                continue
            if check_prefix and prefix_re.match(candidate):  # type: ignore[union-attr]
                continue
            if kept + candidate == value:  # a fixed point would publish the original
                return key_pseudonym(value, key_type, secret, prefix, widen + 1)
            return kept + candidate
    raise ValueError("pseudonym domain too constrained")  # unreachable in practice


@lru_cache(maxsize=1 << 16)
def value_token(value: str, entity_type: str, secret: bytes) -> str:
    """``<ENTITY_hex8>``: a stable stand-in for a personal value (case-insensitive). A date
    of birth written as one date becomes another valid date in the same layout instead
    (``recognizers/date_formats.py``): dates are never turned into invalid values."""
    if entity_type == "DATE_OF_BIRTH":
        date = keyed_date(value, secret)
        if date is not None:
            return date
    digest = hmac.new(
        secret, f"pii\x1f{entity_type}\x1f{value.casefold()}".encode(), hashlib.sha256
    ).hexdigest()
    return f"<{entity_type}_{digest[:8]}>"


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class KeyedPseudonymOperator(Operator):
    """Presidio Operator ``keyed_pseudonym``: params ``secret`` (bytes), optional ``key_type``
    (then a format-keeping key pseudonym, with optional ``prefix``), else a value token for the
    ``entity_type`` Presidio passes in."""

    def operate(self, text: str, params: dict[str, Any] | None = None) -> str:
        params = params or {}
        secret = params["secret"]
        key_type = params.get("key_type")
        if key_type:
            widen = params.get("widen", 0)
            if not widen:  # the call CollisionGuard makes: one lru_cache entry, not two
                return key_pseudonym(text, key_type, secret, params.get("prefix"))
            return key_pseudonym(text, key_type, secret, params.get("prefix"), widen)
        return value_token(text, params["entity_type"], secret)

    def validate(self, params: dict[str, Any] | None = None) -> None:
        secret = (params or {}).get("secret")
        if not isinstance(secret, bytes) or len(secret) < MIN_KEY_BYTES:
            raise ValueError(f"keyed_pseudonym needs a secret of >= {MIN_KEY_BYTES} bytes")

    def operator_name(self) -> str:
        return OPERATOR_NAME

    def operator_type(self) -> OperatorType:
        return OperatorType.Anonymize
