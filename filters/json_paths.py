"""Numbers at JSON paths inside JSON-text columns (amounts in tool arguments), vectorised.

Step arguments are stored as JSON text. A path is dotted keys with ``[*]`` (every element of a
list) or ``[N]`` (one element): ``amount``, ``payment.amount``, ``items[*].amount``. polars'
``json_path_match`` returns only the *first* match of a wildcard, so instead the paths are compiled
into one struct dtype (String leaves, so numbers and numeric strings both survive) and the column
is decoded once with ``str.json_decode``; each path then becomes struct/list expressions and the
largest number wins. A batch whose JSON does not fit that shape (an ``items`` that is a string, a
top-level list, broken text) falls back to a per-row Python walk for that batch only, so one odd
record costs speed, never correctness, and never fails the run.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import orjson
import polars as pl

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[(?:\*|\d+)\])*)")
_INDEX = re.compile(r"\[(\*|\d+)\]")

#: A path step: a key, or a list index (int) / every element ("*").
PathPart = str | int


@dataclass(frozen=True, slots=True)
class ParsedPath:
    text: str
    parts: tuple[PathPart | tuple[str], ...]  # ("*",) marks a wildcard, ints are indexes


def parse_path(text: str) -> ParsedPath:
    """Parse ``a.b[*].c`` / ``items[0].amount``; raise ValueError naming the bad path."""
    if not text or text.startswith(".") or text.endswith(".") or ".." in text:
        raise ValueError(f"bad JSON path {text!r}: use dotted keys like payment.amount")
    parts: list[PathPart | tuple[str]] = []
    for segment in text.split("."):
        match = _SEGMENT.fullmatch(segment)
        if match is None:
            raise ValueError(f"bad JSON path {text!r}: cannot read segment {segment!r}")
        parts.append(match.group(1))
        for index in _INDEX.findall(match.group(2)):
            parts.append(("*",) if index == "*" else int(index))
    return ParsedPath(text, tuple(parts))


# -- reference walk (per row; the fallback and the test oracle) -------------------------------


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _walk(value: Any, parts: tuple[PathPart | tuple[str], ...]) -> list[Any]:
    if not parts:
        return [value]
    head, rest = parts[0], parts[1:]
    if isinstance(head, tuple):
        return [v for item in value for v in _walk(item, rest)] if isinstance(value, list) else []
    if isinstance(head, int):
        if isinstance(value, list) and -len(value) <= head < len(value):
            return _walk(value[head], rest)
        return []
    if isinstance(value, dict) and head in value:
        return _walk(value[head], rest)
    return []


def max_number_python(text: str | None, paths: list[ParsedPath]) -> float | None:
    """The largest number found at any of ``paths`` in one JSON text (None if none)."""
    if not text:
        return None
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    best: float | None = None
    for path in paths:
        for found in _walk(doc, path.parts):
            number = _as_number(found)
            if number is not None and (best is None or number > best):
                best = number
    return best


# -- vectorised path ----------------------------------------------------------------------------


class _Conflict(Exception):
    """Two paths need different shapes at one key (e.g. `a` a leaf and `a.b`)."""


def _merge(tree: dict, parts: tuple[PathPart | tuple[str], ...]) -> None:
    """Add one path to a shape tree: dict = object, ["list", subtree] = list, None = leaf."""
    head, rest = parts[0], parts[1:]
    if not isinstance(head, str):
        raise _Conflict  # a path starting with an index: top-level lists are not decoded
    node = tree.get(head, "missing")
    shape = _shape(rest)
    if node == "missing":
        tree[head] = shape
        return
    tree[head] = _unify(node, shape, rest)


def _shape(parts: tuple[PathPart | tuple[str], ...]) -> Any:
    if not parts:
        return None
    head, rest = parts[0], parts[1:]
    if isinstance(head, str):
        sub: dict = {}
        _merge(sub, parts)
        return sub
    return ["list", _shape(rest)]


def _unify(node: Any, shape: Any, rest: tuple) -> Any:
    if node is None and shape is None:
        return None
    if isinstance(node, dict) and isinstance(shape, dict):
        for key, value in shape.items():
            node[key] = _unify(node[key], value, ()) if key in node else value
        return node
    if isinstance(node, list) and isinstance(shape, list):
        return ["list", _unify(node[1], shape[1], ())]
    raise _Conflict


def _dtype(shape: Any) -> pl.DataType:
    if shape is None:
        return pl.String()
    if isinstance(shape, list):
        return pl.List(_dtype(shape[1]))
    return pl.Struct({key: _dtype(value) for key, value in shape.items()})


def _path_expr(decoded: pl.Expr, parts: tuple[PathPart | tuple[str], ...]) -> pl.Expr:
    """Max numeric value at ``parts`` below ``decoded`` (a struct/list expression)."""
    if not parts:
        return decoded.cast(pl.Float64, strict=False)
    head, rest = parts[0], parts[1:]
    if isinstance(head, str):
        return _path_expr(decoded.struct.field(head), rest)
    if isinstance(head, int):
        return _path_expr(decoded.list.get(head, null_on_oob=True), rest)
    return decoded.list.eval(_path_expr(pl.element(), rest)).list.max()


def _finite(expr: pl.Expr) -> pl.Expr:
    return pl.when(expr.is_finite()).then(expr)


def _leaf_keys(paths: list[ParsedPath]) -> list[str]:
    return sorted({next(p for p in reversed(path.parts) if isinstance(p, str)) for path in paths})


def _vectorised(series: pl.Series, paths: list[ParsedPath]) -> pl.Series:
    tree: dict = {}
    for path in paths:
        _merge(tree, path.parts)
    dtype = _dtype(tree)
    frame = pl.DataFrame({"text": series})
    decoded = pl.col("text").str.json_decode(dtype)
    per_path = [_finite(_path_expr(pl.col("doc"), p.parts)) for p in paths]
    return (
        frame.select(decoded.alias("doc"))
        .select(pl.max_horizontal(per_path).alias("amount"))
        .to_series()
    )


def max_number(series: pl.Series, paths: list[ParsedPath]) -> pl.Series:
    """Per row, the largest number at any of ``paths`` (Float64, null when none)."""
    name = series.name
    if not paths or series.len() == 0:
        return pl.Series(name, [None] * series.len(), dtype=pl.Float64)
    # Only documents that spell one of the leaf keys can hold a value: decode just those.
    # (A key written with \u escapes would be missed: recorders do not write keys that way.)
    needles = [f'"{key}"' for key in _leaf_keys(paths)]
    mask = series.str.contains_any(needles).fill_null(False)
    hits = int(mask.sum())
    if hits == 0:
        return pl.Series(name, [None] * series.len(), dtype=pl.Float64)
    if hits < series.len():
        found = max_number(series.filter(mask), paths)
        index = mask.arg_true()
        out = pl.Series(name, [None] * series.len(), dtype=pl.Float64).scatter(index, found)
        return out.alias(name)
    try:
        out = _vectorised(series, paths)
    except _Conflict:
        out = _walked(series, paths)
    except pl.exceptions.PolarsError:
        # One odd document fails the whole decode: retry in chunks so only the chunks holding
        # odd documents take the slow walk.
        out = pl.concat(
            [_chunk(series.slice(i, _CHUNK), paths) for i in range(0, series.len(), _CHUNK)]
        )
    return out.alias(name)


_CHUNK = 2048


def _walked(series: pl.Series, paths: list[ParsedPath]) -> pl.Series:
    values = [max_number_python(t, paths) for t in series.to_list()]
    return pl.Series(series.name, values, dtype=pl.Float64)


def _chunk(series: pl.Series, paths: list[ParsedPath]) -> pl.Series:
    try:
        return _vectorised(series, paths)
    except pl.exceptions.PolarsError:
        return _walked(series, paths)


def max_number_expr(column: str, paths: list[str]) -> pl.Expr:
    """An expression for ``max_number`` over a JSON-text column, usable in lazy plans."""
    parsed = [parse_path(p) for p in paths]
    return pl.col(column).map_batches(
        lambda s: max_number(s, parsed), return_dtype=pl.Float64, is_elementwise=True
    )
