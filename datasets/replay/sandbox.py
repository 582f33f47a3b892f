"""The write sandbox: the business state a run's writes leave, entity by entity.

A case's baseline state (``context.baseline_state``: ``{"order:ORD-1": "PENDING"}`` or
``{"order:ORD-1": {"status": "PENDING", ...}}``; a bare value is the entity's ``status``) is the
state before the run. Each successful write is applied to it: the write names its entities by
the ids of its own kind its response names that the arguments did not (``book_reservation``
answering a new ``reservation_id``, ``crm_create_ticket`` a ``ticketId``), else by its id-like
arguments (those whose stem the tool name holds first: ``erp_update_order``'s ``orderId``, not
its ``customerId``); an existing entity with that id keeps its key. Its other arguments and
its response's scalar fields become the entity's fields (the response wins: ``status:
UPDATED``). A write that sets no field is remembered as ``{tool: "done"}`` on its entities, so
dropping it still shows. Volatile keys never count.

The recorded state is the baseline after the recorded writes; the replayed state the baseline
after the writes the replay made (each with its recorded response; a write the recording never
matched with what it gave and the ids of its synthetic ``receipt``, whose other fields are the
recording's). P0's final state compares the two with ``state_differences``: one line per entity
field that differs, in the stage-2 tolerances (``1,905.77`` = ``1905.77``).

Reads see the sandbox: once the replay's writes part from the recorded ones, a read is shown
``read_overlay`` of the entities it names (the replayed state against the recorded state at
that read), so an agent that skipped a write reads the baseline, not the recorded result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable
from typing import Any

from golden_distill.datasets.replay.contract import parse_json

State = dict[str, dict[str, Any]]
#: A write's effect: (tool, arguments, response) as parsed values.
Write = tuple[str, Any, Any]

_ID_KEY = re.compile(r"(?:^id$|^ID$|_id$|[a-z0-9]Id$|[a-z0-9]ID$)")
_STEM = re.compile(r"(?:_id|Id|ID|id)$")
_SHOWN = 200


def is_id_key(key: str) -> bool:
    return bool(_ID_KEY.search(key))


def _stem(key: str) -> str:
    return _STEM.sub("", key).replace("_", "").lower()


def baseline_state(text: str | None) -> State | None:
    """The baseline entities (None: the case records no baseline)."""
    value = parse_json(text)
    if value is None:
        return None
    if not isinstance(value, dict):
        return {"state": {"status": value}}
    return {str(k): dict(v) if isinstance(v, dict) else {"status": v} for k, v in value.items()}


def _scalar_ids(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, dict):
        return []
    return [
        (str(k), str(v))
        for k, v in value.items()
        if is_id_key(str(k)) and isinstance(v, str | int) and not isinstance(v, bool)
    ]


def _entity_keys(tool: str, arguments: Any, response: Any, index: dict[str, str]) -> list[str]:
    flat = tool.replace("_", "").lower()

    def own(k: str) -> bool:  # an id of the kind of entity the tool is about
        stem = _stem(k)
        return bool(stem) and stem in flat

    named = _scalar_ids(arguments)
    given = {v for _, v in named}
    answered = [(k, v) for k, v in _scalar_ids(response) if own(k) and v not in given]
    chosen = answered or [(k, v) for k, v in named if own(k)] or named
    return [index.get(v) or f"{_stem(k) or 'entity'}:{v}" for k, v in chosen]


#: The marker of a synthetic receipt (``stubs``): the harness's, not the system's state.
MOCK_KEY = "mock"


def _fields(value: Any, volatile: frozenset[str], scalars_only: bool) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {
        str(k): v
        for k, v in value.items()
        if not is_id_key(str(k))
        and str(k).lower() not in volatile
        and not (scalars_only and (isinstance(v, dict | list) or k == MOCK_KEY))
    }


def apply_writes(base: State | None, writes: Iterable[Write], volatile: frozenset[str]) -> State:
    """``base`` (copied) after ``writes`` in order."""
    state: State = {k: dict(v) for k, v in (base or {}).items()}
    index = {k.rsplit(":", 1)[-1]: k for k in state}
    anonymous: dict[str, int] = {}
    for tool, arguments, response in writes:
        fields = {**_fields(arguments, volatile, False), **_fields(response, volatile, True)}
        keys = _entity_keys(tool, arguments, response, index)
        if not keys:
            anonymous[tool] = anonymous.get(tool, 0) + 1
            keys = [f"{tool}#{anonymous[tool]}"]
            if not isinstance(arguments, dict) and arguments is not None:
                fields = {"arguments": arguments}
        for key in keys:
            index.setdefault(key.rsplit(":", 1)[-1], key)
            state.setdefault(key, {}).update(fields or {tool: "done"})
    return state


def read_overlay(
    recorded: State, replayed: State, ids: Iterable[str], skip: Container[str]
) -> tuple[dict[str, Any], set[str]]:
    """What a read of the entities ``ids`` names must show unlike its recording: the fields
    whose replayed value differs from the recorded state at that read (to set), and those only
    the recorded writes gave (to drop). ``skip``: field names never shown (the ``{tool:
    "done"}`` markers)."""
    wanted = set(ids)
    changed: dict[str, Any] = {}
    dropped: set[str] = set()
    absent = object()
    for key in recorded.keys() | replayed.keys():
        if key.rsplit(":", 1)[-1] not in wanted:
            continue
        before, after = recorded.get(key, {}), replayed.get(key, {})
        for name, value in after.items():
            if name not in skip and before.get(name, absent) != value:
                changed[name] = value
        dropped |= {name for name in before if name not in after and name not in skip}
    return changed, dropped


def sandboxed_read(
    tool: str, arguments: Any, value: Any, recorded: State, replayed: State, skip: Container[str]
) -> tuple[Any, bool]:
    """A read's response ``value`` (changed in place) as the sandbox holds its entities, and
    whether anything changed: an object is the entity its arguments' ids name; each object of a
    list is the entity its own ids name (of the tool's kind first: ``erp_list_orders``' items by
    ``orderId``); anything else is left as recorded."""
    if isinstance(value, list):
        targets = [(v, _item_ids(tool, v)) for v in value if isinstance(v, dict)]
    elif value is None or isinstance(value, dict):
        value = {} if value is None else value
        targets = [(value, id_values(arguments))]
    else:
        return value, False
    touched = False
    for target, ids in targets:
        changed, dropped = read_overlay(recorded, replayed, ids, skip)
        for name in dropped & target.keys():
            del target[name]
            touched = True
        if changed:
            target.update(changed)
            touched = True
    return value, touched


def _item_ids(tool: str, item: dict[str, Any]) -> list[str]:
    flat = tool.replace("_", "").lower()
    named = _scalar_ids(item)
    own = [v for k, v in named if _stem(k) and _stem(k) in flat]
    return own or [v for _, v in named]


def show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


Compare = Callable[[Any, Any], tuple[list[str], set[str]]]


def state_differences(
    recorded: State, replayed: State, compare: Compare
) -> tuple[list[str], set[str], list[str]]:
    """One readable line per entity field that differs (``compare(recorded, replayed)`` gives
    the differing paths and tolerances used for one field's values), the tolerances, and the
    entities that differ."""
    lines: list[str] = []
    used: set[str] = set()
    entities: list[str] = []
    for key in sorted(recorded.keys() | replayed.keys()):
        if key not in replayed:
            lines.append(f"{key}: never written by the replay (recorded {show(recorded[key])})")
            entities.append(key)
            continue
        if key not in recorded:
            lines.append(f"{key}: written only by the replay ({show(replayed[key])})")
            entities.append(key)
            continue
        before, after = recorded[key], replayed[key]
        differing, tolerances = compare(before, after)
        used |= tolerances
        if differing:
            entities.append(key)
        for path in differing:
            field = path.split(".", 1)[0].split("[", 1)[0]
            lines.append(
                f"{key}.{field}: recorded {show(before.get(field, '(absent)'))}, "
                f"replayed {show(after.get(field, '(absent)'))}"
            )
    return list(dict.fromkeys(lines)), used, entities


def own_effect(response: Any, synthetic: bool) -> Any:
    """What a served write's response says about its own effect: a synthetic receipt's ids
    only (its other fields were copied from a recorded response)."""
    if not synthetic or not isinstance(response, dict):
        return response
    return {k: v for k, v in response.items() if is_id_key(k)}


def id_values(value: Any) -> list[str]:
    """String values under id-like keys, at any depth."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str | int) and not isinstance(item, bool) and is_id_key(str(key)):
                found.append(str(item))
            elif isinstance(item, dict | list):
                found.extend(id_values(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(id_values(item))
    return found


def receipt(template: Any, arguments: Any, mock_id: str) -> Any:
    """``template`` (a recorded response) with ids replaced by ``mock_id`` and fields the call
    gave taken from its arguments."""
    if not isinstance(template, dict):
        return {"id": mock_id, MOCK_KEY: True}
    args = arguments if isinstance(arguments, dict) else {}
    out: dict[str, Any] = {}
    for key, value in template.items():
        if is_id_key(key) and isinstance(value, str | int) and not isinstance(value, bool):
            out[key] = args.get(key, mock_id)  # the entity the call named, else a new mock id
        elif key in args:
            out[key] = args[key]
        elif isinstance(value, dict):
            out[key] = receipt(value, {}, mock_id)
        else:
            out[key] = value
    out[MOCK_KEY] = True
    return out
