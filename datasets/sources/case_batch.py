"""Case tuples -> one Arrow record batch, column by column.

``pa.Table.from_pylist`` looks every field of every nested dict up by name; for cases with a
dozen steps that costs more than parsing the JSON did. Readers on the hot path (the native
reader) instead produce each case as a flat tuple in schema field order: a struct's children
take consecutive positions, a list of structs is one position holding a list of tuples (each
laid out the same way). Transposing a batch of tuples with ``zip`` and handing each column to
``pa.array`` keeps the per-value work in C.

If a value does not fit its column (a reader's type check missed something), the batch is
rebuilt row by row to find the culprits, so one bad record is reported, never a lost batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, chain
from typing import Any

import pyarrow as pa

from golden_distill.datasets.schema import CASE_SCHEMA

_BUILD_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


def tuple_width(fields: Sequence[pa.Field]) -> int:
    """How many tuple positions ``fields`` take (structs flattened)."""
    width = 0
    for f in fields:
        width += tuple_width(list(f.type)) if pa.types.is_struct(f.type) else 1
    return width


def _arrays(fields: Sequence[pa.Field], columns: Sequence[Sequence[Any]], pos: int, n: int):
    arrays: list[pa.Array] = []
    for f in fields:
        kind = f.type
        if pa.types.is_struct(kind):
            children = list(kind)
            child_arrays, pos = _arrays(children, columns, pos, n)
            arrays.append(pa.StructArray.from_arrays(child_arrays, fields=children))
        elif pa.types.is_list(kind) and pa.types.is_struct(kind.value_type):
            arrays.append(_list_of_structs(columns[pos], kind))
            pos += 1
        else:
            arrays.append(pa.array(columns[pos], type=kind, size=n))
            pos += 1
    return arrays, pos


def _list_of_structs(cells: Sequence[list[tuple[Any, ...]]], list_type: pa.ListType) -> pa.Array:
    offsets = pa.array(list(accumulate(map(len, cells), initial=0)), type=pa.int32())
    flat = list(chain.from_iterable(cells))
    children = list(list_type.value_type)
    columns = list(zip(*flat, strict=True)) if flat else [()] * tuple_width(children)
    child_arrays, _ = _arrays(children, columns, 0, len(flat))
    values = pa.StructArray.from_arrays(child_arrays, fields=children)
    return pa.ListArray.from_arrays(offsets, values, type=list_type)


def build_batch(rows: Sequence[tuple[Any, ...]], schema: pa.Schema = CASE_SCHEMA) -> pa.RecordBatch:
    """The record batch for ``rows``; raises an Arrow/type error if a value does not fit."""
    fields = list(schema)
    columns = list(zip(*rows, strict=True)) if rows else [()] * tuple_width(fields)
    arrays, _ = _arrays(fields, columns, 0, len(rows))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def build_batch_checked(
    rows: Sequence[tuple[Any, ...]], schema: pa.Schema = CASE_SCHEMA
) -> tuple[pa.RecordBatch, list[int]]:
    """Like ``build_batch``, but rows that do not fit are left out; returns their indices."""
    try:
        return build_batch(rows, schema), []
    except _BUILD_ERRORS:
        pass
    good, bad = [], []
    for index, row in enumerate(rows):
        try:
            build_batch([row], schema)
        except _BUILD_ERRORS:
            bad.append(index)
        else:
            good.append(row)
    return build_batch(good, schema), bad
