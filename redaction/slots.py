"""Every string of a case row, default deny: each is a rewritable slot or a shaped verbatim field.

The row is walked generically (any column, any depth, columns added later included), so nothing
is skipped because nobody listed it. Each string is one of:

* a **JSON slot** (``arguments``, ``response``, ``messages``, ``model_params``... by field name):
  JSON text, walked leaf by leaf and edited at token level (text when it does not parse);
* a **verbatim field** with a declared shape (tool names, step kinds and statuses, systems,
  intent, agent/model/prompt versions, ids made by hashing): replay or the funnels need it intact,
  so it is never rewritten. A value that does not fit its shape is scanned like text, and any
  finding in a verbatim field quarantines the case (``verify.py``);
* a **key column** (``tenant_id``, ``user_id``...): pseudonymised by ``Redactor.finish``;
* a **provenance field** (``source.uri``): rewritten by ``provenance.provenance_uri`` in
  ``Redactor.finish``, component by component, never scanned as text;
* a **text slot**: everything else (user input, answers, chunk text and ids, source record ids,
  final states, any new string column): scanned and rewritten.

The row is copied on the way (only the nested parts that may change), so the caller's row is
never modified.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from golden_distill.redaction.provenance import PROVENANCE_FIELDS
from golden_distill.redaction.walker import Slot, make_slot

Setter = Callable[[str], None]

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:/-]{0,127}$")
WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/+-]{0,127}$")
HASH_ID = re.compile(r"^(?:[a-z]{0,3}_?|sha\d{1,3}:|md5:)[0-9a-f]{8,128}$")
NUMERIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: Location (list indices dropped) -> declared shape of a verbatim field.
VERBATIM: dict[str, re.Pattern[str]] = {
    "case_id": HASH_ID,
    "cluster_id": NUMERIC_ID,
    "steps.name": IDENTIFIER,
    "steps.kind": WORD,
    "steps.status": WORD,
    "steps.system": IDENTIFIER,
    "steps.canonical_args_sha256": HASH_ID,
    "intent.name": IDENTIFIER,
    "agent.agent_version": VERSION,
    "agent.model_name": VERSION,
    "agent.system_prompt_version": VERSION,
    "outcome.status": WORD,
    "source.format": WORD,
    "funnels": WORD,
    "split": WORD,
    "trust": WORD,
    "expected.source": WORD,
    "expected.actions.name": IDENTIFIER,
}
#: Fields holding JSON text (by their own name, wherever they sit).
JSON_FIELDS = frozenset(
    {
        "arguments",
        "response",
        "error",
        "messages",
        "memory",
        "baseline_state",
        "env_versions",
        "model_params",
        "prompt_variables",
        "funnel_reasons",
        "final_state",
    }
)
#: Derived fields written by the pipeline itself after redaction (counts, never values).
SKIPPED = frozenset({"redaction"})


@dataclass(frozen=True, slots=True)
class Verbatim:
    """A field kept byte for byte: where it is, its value, and whether it fits its shape."""

    location: str
    text: str
    fits: bool


def _setter(container: dict[str, Any] | list[Any], key: Any) -> Setter:
    def put(value: str) -> None:
        container[key] = value

    return put


def case_slots(
    row: dict[str, Any], key_columns: Iterable[str] = ()
) -> tuple[dict[str, Any], list[tuple[Slot, Setter]], list[Verbatim]]:
    """A copied row, its rewritable slots (setters write into the copy) and its verbatim
    fields. ``key_columns`` are left to the caller (pseudonymised as keys)."""
    skip = set(key_columns) | SKIPPED
    walk = _SlotWalk()
    out = dict(row)
    for column, value in row.items():
        if column in skip:
            continue
        walk.visit(out, column, value, column, column, column)
    return out, walk.slots, walk.verbatim


#: The values ``_SlotWalk.visit`` does something with (anything else is left as it is).
_VISITED = (dict, list, str)


class _SlotWalk:
    """The recursive walk of ``case_slots``. A class, not nested closures: closures that call
    each other form reference cycles holding every slot (and parsed JSON) of the case until the
    cyclic GC runs, which redaction pauses for a whole shard."""

    __slots__ = ("slots", "verbatim")

    def __init__(self) -> None:
        self.slots: list[tuple[Slot, Setter]] = []
        self.verbatim: list[Verbatim] = []

    def visit(
        self, container: Any, key: Any, value: Any, location: str, pattern: str, name: str
    ) -> None:
        if isinstance(value, dict):
            copy = dict(value)
            container[key] = copy
            for k, v in value.items():
                if isinstance(v, _VISITED):  # numbers, booleans, dates, None: nothing to do
                    self.visit(copy, k, v, f"{location}.{k}", f"{pattern}.{k}", k)
        elif isinstance(value, list):
            copy_list = list(value)
            container[key] = copy_list
            for i, v in enumerate(value):
                if isinstance(v, _VISITED):
                    self.visit(copy_list, i, v, f"{location}[{i}]", pattern, name)
        elif isinstance(value, str) and value:
            if pattern in PROVENANCE_FIELDS:
                return  # owned by the provenance rule (Redactor.finish), never scanned as text
            shape = VERBATIM.get(pattern)
            if shape is not None and HASH_ID.match(value):
                return  # a hash (case ids, prompt digests): nothing personal can be read from it
            if shape is not None:
                self.verbatim.append(Verbatim(location, value, bool(shape.match(value))))
            else:
                self.slots.append(
                    (make_slot(location, value, name in JSON_FIELDS), _setter(container, key))
                )
