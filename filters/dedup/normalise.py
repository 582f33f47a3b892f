"""The normalised form of a run's trajectory: what a run *did*, without the values it did it with.

A step becomes ``name:status:W`` (a write, ``is_mutating``) or ``name:status:R`` (anything else),
and its arguments become a *shape*: the keys and value types, never the values. So two runs that
cancel different orders for different amounts have the same normalised trajectory, and a run that
hit a timeout and retried does not. Model steps (kind ``model``) are left out: they are the agent
thinking, not the tool path, and their names carry model versions that say nothing about the run.
"""

from __future__ import annotations

from typing import Any

import orjson

from golden_distill.datasets.canonical_json import DEFAULT_VOLATILE_KEYS

#: Step kinds that are part of the tool path.
PATH_KINDS = ("tool", "route", "handoff")


def value_shape(value: Any, volatile: frozenset[str] = DEFAULT_VOLATILE_KEYS) -> str:
    """Keys and value types of a parsed JSON value, keys sorted, list lengths ignored.

    ``{"orderId": "ORD-1", "items": [{"sku": "A", "qty": 2}, {"sku": "B", "qty": 1}]}`` has the
    shape ``{items:[{qty:n,sku:s}],orderId:s}``. Volatile keys (request ids, timestamps) are
    dropped like canonical JSON drops them, so a fresh request id does not change the shape.
    """
    if isinstance(value, dict):
        parts = sorted(
            f"{k}:{value_shape(v, volatile)}"
            for k, v in value.items()
            if str(k).lower() not in volatile
        )
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list):
        return "[" + "|".join(sorted({value_shape(v, volatile) for v in value})) + "]"
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int | float):
        return "n"
    if isinstance(value, str):
        return "s"
    return "z"


def arguments_shape(arguments: str | None) -> str:
    """The shape of a step's arguments JSON text; ``-`` when absent, ``?`` when not JSON."""
    if arguments is None or arguments == "":
        return "-"
    try:
        return value_shape(orjson.loads(arguments))
    except orjson.JSONDecodeError:
        return "?"


def step_token(name: str, status: str | None, is_mutating: bool | None) -> str:
    """One step of the normalised tool path (see the module docstring)."""
    return f"{name}:{status or 'ok'}:{'W' if is_mutating else 'R'}"
