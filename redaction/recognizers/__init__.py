"""Curated recognizers, one per file, registered once in ``registry.REGISTERED``.

``SPECS`` (config name -> spec) is loaded on first use: the config module reads the registry's
names without paying for Presidio and the recognizers' word lists.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from golden_distill.redaction.recognizers.registry import REGISTERED

if TYPE_CHECKING:
    from golden_distill.redaction.recognizers.base import RecognizerSpec

_LOADED: dict[str, RecognizerSpec] = {}


def load_specs() -> dict[str, RecognizerSpec]:
    """Every registered recognizer's ``SPEC`` by name, in the registry's order."""
    if not _LOADED:
        for name in REGISTERED:
            spec = importlib.import_module(f"{__name__}.{name}").SPEC
            if spec.name != name:
                raise RuntimeError(f"recognizers/{name}.py declares SPEC.name={spec.name!r}")
            _LOADED[name] = spec
    return _LOADED


def __getattr__(attr: str) -> Any:
    if attr == "SPECS":
        return load_specs()
    if attr == "RecognizerSpec":
        from golden_distill.redaction.recognizers.base import RecognizerSpec

        return RecognizerSpec
    raise AttributeError(attr)


__all__ = ["REGISTERED", "SPECS", "RecognizerSpec", "load_specs"]
