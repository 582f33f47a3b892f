"""Strict, self-documenting configuration models and the YAML loader every config file goes through.

Each phase declares its own config section next to its code (dlt-style: a field's docstring is its
``Field(description=...)``); they all inherit ``StrictModel`` so an unknown key is an error, not a
silently ignored typo. ``load_yaml`` turns pydantic's errors into one message per problem naming
the file, the dotted key path and, for a typo, the nearest valid key:

    configs/nightly.yaml: funnels.recovery.recover_whitin_steps: unknown key; did you mean
    recover_within_steps?
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base for every config section: unknown keys are errors; assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


class ConfigError(ValueError):
    """A config file that cannot be used; ``problems`` holds one readable line per issue."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """Walk ``loc`` through nested models to the model that owns the last key."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            return None
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = _unwrap(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    """The model inside ``X | None``, ``dict[str, X]`` or ``list[X]`` annotations."""
    args = getattr(annotation, "__args__", None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in args or ():
        found = _unwrap(arg)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


def describe_errors(model: type[BaseModel], error: ValidationError) -> list[str]:
    problems = []
    for err in error.errors():
        loc = tuple(err["loc"])
        path = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            owner = _model_at(model, loc)
            hint = ""
            if owner is not None:
                close = difflib.get_close_matches(str(loc[-1]), list(owner.model_fields), n=1)
                if close:
                    hint = f"; did you mean {close[0]}?"
                else:
                    hint = f"; valid keys: {', '.join(owner.model_fields)}"
            problems.append(f"{path}: unknown key{hint}")
        else:
            shown = err.get("input")
            value = "" if isinstance(shown, dict | list) else f" (got {shown!r})"
            problems.append(f"{path}: {err['msg']}{value}")
    return problems


def validate_mapping(model: type[M], data: Any, source: str = "<config>") -> M:
    """Validate already-parsed config data; raise ``ConfigError`` with readable problems."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            source, [f"expected a mapping at the top level, got {type(data).__name__}"]
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(source, describe_errors(model, exc)) from None


def load_yaml(model: type[M], path: Path | str) -> M:
    """Read and validate a YAML config file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read: {exc.strerror}"]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(
            str(path), [f"{where}not valid YAML ({getattr(exc, 'problem', exc)})"]
        ) from None
    return validate_mapping(model, data, str(path))
