"""`golden run`'s options, derived from the run's parameters (``DistillParams``, flows/params.py).

One option per field, its help the field's description, so a new run parameter is one field.
Only what the command line spells differently is declared here: the flag names that are not
``--field-name`` (short options, ``--store`` for ``store_url``...).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from golden_distill.flows.params import DistillParams, optional

#: Flags that are not ``--<field name with dashes>``; each option keeps its field's name.
FLAGS: dict[str, tuple[str, ...]] = {
    "config_path": ("--config", "-c"),
    "sources": ("--source", "-s"),
    "source_format": ("--format",),
    "store_url": ("--store",),
    "set_name": ("--set",),
}

F = TypeVar("F", bound=Callable[..., Any])


def flags(name: str) -> tuple[str, ...]:
    """The command-line spellings of the field ``name``."""
    return FLAGS.get(name, ("--" + name.replace("_", "-"),))


def run_parameters() -> list[inspect.Parameter]:
    """One keyword parameter per field of ``DistillParams`` (None: not given)."""
    parameters = []
    for name, field in DistillParams.model_fields.items():
        annotation, default = optional(field)
        option = typer.Option(*flags(name), help=field.description)
        parameters.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=Annotated[annotation, option],
            )
        )
    return parameters


def with_run_options(command: F) -> F:
    """Give ``command(*, <its own options>, **values)`` one option per run parameter (typer
    reads ``inspect.signature``); the command gets the values by field name in ``values``."""
    own = [
        p
        for p in inspect.signature(command, eval_str=True).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*run_parameters(), *own], return_annotation=None
    )
    return command
