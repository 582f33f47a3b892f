"""Canonical case columns -> one Arrow record batch.

``pa.Table.from_pylist`` looks every field of every nested dict up by name; for cases with a
dozen steps that costs more than parsing the JSON did. Readers on the hot path (the native
reader) instead hand over one Python list per leaf column, in schema field order with structs
flattened (a struct's children take consecutive positions), and each list of structs as a
ready Arrow array built by ``list_of_structs`` from offsets and its own leaf columns. Handing
each column to ``pa.array`` keeps the per-value work in C.

A value that does not fit its column raises (``BUILD_ERRORS``); the reader finds the record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from golden_distill.datasets.schema import CASE_SCHEMA

#: What building a batch raises when a value does not fit its column.
BUILD_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


def _arrays(
    fields: Sequence[pa.Field], columns: Sequence[Any], pos: int, n: int
) -> tuple[list[pa.Array], int]:
    arrays: list[pa.Array] = []
    for f in fields:
        kind = f.type
        if pa.types.is_struct(kind):
            children = list(kind)
            child_arrays, pos = _arrays(children, columns, pos, n)
            arrays.append(pa.StructArray.from_arrays(child_arrays, fields=children))
            continue
        column = columns[pos]
        arrays.append(column if isinstance(column, pa.Array) else pa.array(column, kind, size=n))
        pos += 1
    return arrays, pos


def list_of_structs(
    offsets: Sequence[int], columns: Sequence[Any], list_type: pa.ListType
) -> pa.ListArray:
    """A list-of-structs array: list ``i`` holds values ``offsets[i]:offsets[i + 1]``.

    ``columns`` are the struct's leaf columns over all the lists' values, in field order.
    """
    children = list(list_type.value_type)
    child_arrays, _ = _arrays(children, columns, 0, offsets[-1])
    values = pa.StructArray.from_arrays(child_arrays, fields=children)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=list_type)


def build_batch(
    columns: Sequence[Any], num_rows: int, schema: pa.Schema = CASE_SCHEMA
) -> pa.RecordBatch:
    """The record batch of ``columns`` (leaf columns in schema order, see the module doc)."""
    arrays, used = _arrays(list(schema), columns, 0, num_rows)
    if used != len(columns):
        raise ValueError(f"{len(columns)} columns given, the schema has {used}")
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
