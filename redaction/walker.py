"""A JSON-aware walker over the text-bearing fields of a case, editing JSON at token level.

Why not presidio-structured: 0.0.10 crashes on lists of objects, misses lists of strings and
collapses list values under one key path. Why token level: re-serialising parsed JSON changes
bytes that replay and reviewers rely on (``120.50`` becomes ``120.5``, big integers overflow,
escapes change). So reading uses a fast parse (orjson) to find leaves and their key paths, and
writing re-emits only the string (or, for keys, number) tokens that change; every other byte of
the recorded JSON text (numbers, booleans, whitespace, key order) is kept exactly.

A *slot* is one text-bearing field of a case row (``steps[3].response``...), either JSON text or
plain text. JSON fields that do not parse are treated as plain text, which is what they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

Path = tuple[str, ...]

#: JSON tokens: strings, punctuation, literals (numbers, true/false/null), whitespace.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+|\s+', re.S)


@dataclass(slots=True)
class Slot:
    """One text-bearing field: where it is (for messages), its text and whether it is JSON."""

    location: str
    text: str
    is_json: bool
    parsed: Any = None  # the parsed value when is_json


_NOT_JSON = object()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Duplicate keys keep every value (as a list under the key), so each one is seen."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            prev = out[key]
            out[key] = [*prev, value] if isinstance(prev, list) and key in _DUPES else [prev, value]
            _DUPES.add(key)
        else:
            out[key] = value
    return out


_DUPES: set[str] = set()


#: First characters of a JSON text after JSON whitespace, for either parser (the standard one
#: also reads ``NaN``, ``Infinity`` and ``-Infinity``): anything else fails both.
_JSON_START = frozenset('{["-0123456789tfnNI')
_JSON_SPACE = " \t\n\r"


def parse_json(text: str) -> Any:
    """Parse JSON robustly: orjson first; numbers out of its range (``1e999``, 30-digit
    integers) fall back to the standard parser, which keeps them. Returns ``_NOT_JSON``."""
    if text[:1] not in _JSON_START and text.lstrip(_JSON_SPACE)[:1] not in _JSON_START:
        return _NOT_JSON  # cannot parse: spare both parsers building an exception
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    else:  # orjson keeps only the last of duplicate keys: count keys to know every one is seen
        if type(parsed) is not dict and type(parsed) is not list:
            return parsed
        keys = _key_count(parsed)
        # every key token is followed by a colon outside strings: as many colons in all as keys
        # parsed proves there was no duplicate without tokenising the text
        if keys == text.count(":") or keys == _key_tokens(text):
            return parsed
    try:
        return json.loads(text, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        return _NOT_JSON


_STRING_OR_KEY = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?', re.S)


def _key_tokens(text: str) -> int:
    """Object keys written in ``text`` (string tokens followed by a colon; JSON held inside
    strings is one token, so its keys are not counted here)."""
    return sum(1 for colon in _STRING_OR_KEY.findall(text) if colon)


def _key_count(value: Any) -> int:
    """Keys of every object in an orjson-parsed value (only exact dicts and lists)."""
    count = 0
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            count += len(item)
            push(item.values())
        elif kind is list:
            push(item)
    return count


def make_slot(location: str, text: str, json_expected: bool) -> Slot:
    if json_expected:
        parsed = parse_json(text)
        if parsed is not _NOT_JSON:
            return Slot(location, text, True, parsed)
    return Slot(location, text, False)


def nested_json(value: str) -> Any:
    """The parsed value of a string that is itself JSON (a chat tool reply, call arguments),
    or ``None``. Only objects and arrays count: "42" stays a string."""
    stripped = value.strip()  # recorders leave whitespace and trailing newlines around JSON
    if len(stripped) < 2 or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return None
    parsed = parse_json(stripped)
    return None if parsed is _NOT_JSON else parsed


def iter_leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """(key path, leaf) for every string and number; list items take their list's key.
    Strings holding JSON are walked as JSON, under the path of the string."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from iter_leaves(v, (*path, k))
    elif isinstance(value, list):
        for v in value:
            yield from iter_leaves(v, path)
    elif isinstance(value, str):
        inner = nested_json(value)
        if inner is None:
            yield path, value
        else:
            yield from iter_leaves(inner, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path, value


def iter_keys(value: Any) -> Iterator[str]:
    """Every object key (some recorders key objects by id: ``payment_methods: {pm_1: ...}``)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from iter_keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from iter_keys(v)
    elif isinstance(value, str):
        inner = nested_json(value)
        if inner is not None:
            yield from iter_keys(inner)


def leaves_and_keys(value: Any) -> tuple[list[tuple[Path, Any]], list[str]]:
    """``list(iter_leaves(value))`` and ``list(iter_keys(value))`` in one walk: each string
    holding JSON is parsed once, not once per walk, and no generator chain is resumed per
    level of nesting for every item."""
    leaves: list[tuple[Path, Any]] = []
    keys: list[str] = []
    _collect(value, (), leaves, keys)
    return leaves, keys


def _collect(value: Any, path: Path, leaves: list[tuple[Path, Any]], keys: list[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            keys.append(k)
            _collect(v, (*path, k), leaves, keys)
    elif isinstance(value, list):
        for v in value:
            _collect(v, path, leaves, keys)
    elif isinstance(value, str):
        inner = nested_json(value)
        if inner is None:
            leaves.append((path, value))
        else:
            _collect(inner, path, leaves, keys)
    elif isinstance(value, _NUMBER) and not isinstance(value, bool):
        leaves.append((path, value))


_NUMBER = (int, float)


def strings_and_keys(value: Any, strings: list[str], keys: list[str]) -> None:
    """Appends the string leaves of ``value`` (as ``iter_leaves`` finds them) to ``strings``
    and its object keys (as ``iter_keys``) to ``keys``; no key paths are built."""
    if isinstance(value, dict):
        for k, v in value.items():
            keys.append(k)
            strings_and_keys(v, strings, keys)
    elif isinstance(value, list):
        for v in value:
            strings_and_keys(v, strings, keys)
    elif isinstance(value, str):
        inner = nested_json(value)
        if inner is None:
            strings.append(value)
        else:
            strings_and_keys(inner, strings, keys)


def _decode(token: str) -> str:
    return token[1:-1] if "\\" not in token else json.loads(token)


def _encode(value: str) -> str:
    return orjson.dumps(value).decode()


def rewrite_json_text(
    text: str,
    on_string: Callable[[str, Callable[[], Path]], str],
    on_number: Callable[[str, Path], str | None] | None = None,
) -> str:
    """Re-emit ``text`` (valid JSON) with strings (values and keys) passed through
    ``on_string(value, path_fn)`` and, when given, number tokens through
    ``on_number(token, path)`` (``None`` keeps the token). ``path_fn()`` gives the key path of
    the string being visited (call it at once: it reads the walker's live state). Untouched
    tokens are copied byte for byte."""
    out: list[str] = []
    stack: list[list[Any]] = []  # [is_object, current_key]
    expect_key = False

    def path_fn() -> Path:
        return tuple(frame[1] for frame in stack if frame[0])

    for match in _TOKEN.finditer(text):
        tok = match.group(0)
        c = tok[0]
        if c == '"':
            value = _decode(tok)
            if expect_key:
                stack[-1][1] = value
            new = on_string(value, path_fn)
            out.append(tok if new == value else _encode(new))
            continue
        if c == "{":
            stack.append([True, None])
            expect_key = True
        elif c == "[":
            stack.append([False, None])
            expect_key = False
        elif c in "}]":
            stack.pop()
            expect_key = False
        elif c == ":":
            expect_key = False
        elif c == ",":
            expect_key = bool(stack) and stack[-1][0]
        elif on_number is not None and (c.isdigit() or c == "-"):
            new_tok = on_number(tok, path_fn())
            if new_tok is not None:
                out.append(new_tok)
                continue
        out.append(tok)
    return "".join(out)


_STRING_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def rewrite_json_strings(text: str, on_string: Callable[[str], str]) -> str:
    """The fast form of ``rewrite_json_text`` when no key paths are needed: only string tokens
    (values and keys) are visited, by one C-level scan; everything else is copied as is."""

    def one(match: re.Match[str]) -> str:
        tok = match.group(0)
        value = _decode(tok)
        new = on_string(value)
        return tok if new == value else _encode(new)

    return _STRING_TOKEN.sub(one, text)
