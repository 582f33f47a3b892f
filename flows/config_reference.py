"""Render the configuration reference (docs/configuration.md) from the config models themselves.

    python -m golden_distill.flows.config_reference > docs/configuration.md

Every field is documented where it is declared (``Field(description=...)``), so the reference is
generated rather than written twice; rerun this after changing a config model.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from golden_distill.flows.config import PipelineConfig

HEADER = """# Configuration reference

One YAML file configures a run (`configs/nightly.yaml` is the shipped default, with comments).
`golden config init my.yaml` writes that packaged default (or `--name tau-bench.yaml`; `--list`
shows the shipped ones) for you to edit, so an installed wheel needs no checkout. Every key is
validated: an unknown key is an error with a did-you-mean suggestion, and
`golden config validate FILE` checks a file without running anything (no FILE: the packaged
default); a config error exits 2. `golden config schema` prints the JSON Schema for editor
completion. Secrets are never in this file: the pseudonym key
comes from `GOLDEN_PSEUDONYM_KEY` or a Prefect Secret block (`redaction.key_secret_block`); store
credentials come from the environment.

What changes shard results (and so invalidates the cache): `ingest`, `funnels`, `redaction`,
`dedup`. What does not: `publish`, `run`.

This page is generated from the models (`python -m golden_distill.flows.config_reference`).
"""


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        try:
            value: Any = info.default_factory()  # type: ignore[call-arg]
        except TypeError:
            return "(computed)"
    elif info.default is PydanticUndefined:
        return "(required)"
    else:
        value = info.default
    if isinstance(value, BaseModel):
        return "(section)"
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _rows(
    model: type[BaseModel], prefix: str, out: list[str], nested: list[tuple[str, type[BaseModel]]]
) -> None:
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        sub = _model_of(info.annotation)
        desc = (info.description or "").replace("|", "\\|").replace("\n", " ")
        if sub is not None and _default(info) == "(section)":
            nested.append((path, sub))
            desc = desc or f"see `{path}` below"
        out.append(f"| `{path}` | `{_default(info)}` | {desc} |")


def render() -> str:
    lines = [HEADER]
    for section, info in PipelineConfig.model_fields.items():
        model = _model_of(info.annotation)
        if model is None:
            continue
        lines.append(f"\n## `{section}:` — {info.description or ''}\n")
        if model.__doc__:
            lines.append(" ".join(model.__doc__.split()) + "\n")
        queue: list[tuple[str, type[BaseModel]]] = [(section, model)]
        while queue:
            path, current = queue.pop(0)
            if path != section:
                lines.append(f"\n### `{path}`\n")
            lines.append("| key | default | meaning |\n|---|---|---|")
            nested: list[tuple[str, type[BaseModel]]] = []
            _rows(current, f"{path}.", lines, nested)
            queue.extend(nested)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
