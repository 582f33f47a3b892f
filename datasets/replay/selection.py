"""Which cases a replay takes: a funnel and a split, checked against the set before anything
runs, so a typo is a usage error with a suggestion instead of a green gate over zero cases."""

from __future__ import annotations

import difflib
from typing import Any

from golden_distill.datasets.schema import SPLITS


class SelectionError(ValueError):
    """An unknown funnel or split (a usage error)."""


def _suggest(value: str, known: list[str]) -> str:
    exact_case = [k for k in known if k.casefold() == value.casefold()]
    if exact_case:
        return f"; did you mean {exact_case[0]!r}? (names are case-sensitive)"
    close = difflib.get_close_matches(value, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def set_funnels(golden: Any) -> list[str]:
    """The funnels the version's manifest counts."""
    return sorted(golden.manifest.get("counts", {}).get("per_funnel", {}))


def check_selection(golden: Any, funnel: str | None, split: str | None) -> None:
    """``SelectionError`` naming the problem and a suggestion when ``funnel`` is not a funnel of
    the set or ``split`` not a split."""
    if split is not None and split not in SPLITS:
        raise SelectionError(
            f"split {split!r}: one of {', '.join(SPLITS)}{_suggest(split, list(SPLITS))}"
        )
    if funnel is not None:
        known = set_funnels(golden)
        if funnel not in known:
            listed = ", ".join(known) or "none"
            raise SelectionError(f"funnel {funnel!r} is not a funnel of "
                                 f"{golden.name}@{golden.version} (funnels: {listed})"
                                 f"{_suggest(funnel, known)}")  # fmt: skip
