"""Stage-2 argument normalisers: the differences a tolerant match forgives.

Each is small and declarative, switched on in ``matching`` (``configs/gate.yaml``): keys the
recording lacks whose value is null/false/empty or a declared default; date formats; ``1`` vs
``1.0``; whitespace and case of declared text fields. ``normalise(recorded, called)`` returns the
two argument values in the same normal form, so tolerant equality is plain ``==``.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any

from golden_distill.datasets.replay.config import MatchingSection

_DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%d.%m.%Y", "%Y/%m/%d", "%d %B %Y", "%B %d, %Y",
                 "%b %d, %Y", "%d %b %Y", "%Y%m%d")  # fmt: skip
#: Cheap pre-check: digits and letters in the shapes of the formats above (most text fails).
_DATE_LIKE = re.compile(
    r"^(?:\d{4}[-/]\d{1,2}[-/]\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{4}|\d{8}"
    r"|\d{1,2} [A-Za-z]{3,9} \d{4}|[A-Za-z]{3,9} \d{1,2}, \d{4})$"
)
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=4096)
def as_date(text: str) -> str | None:
    """ISO date of ``text`` when it is a date in one of the known formats, else None."""
    if len(text) > 20 or not _DATE_LIKE.match(text.strip()):
        return None
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).date().isoformat()
        except ValueError:
            continue
    return None


class Normaliser:
    """The stage-2 normal form of arguments for one config."""

    def __init__(self, config: MatchingSection) -> None:
        self.config = config
        self.text_fields = frozenset(k.lower() for k in config.text_fields)

    def value(self, value: Any, key: str | None = None) -> Any:
        """One value in normal form (recursively)."""
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and self.config.normalise_numbers:
            return float(value)
        if isinstance(value, str):
            if key is not None and key.lower() in self.text_fields:
                value = _SPACES.sub(" ", value).strip().casefold()
            if self.config.normalise_dates:
                date = as_date(value)
                if date is not None:
                    return date
        return value

    def drop_added(self, tool: str, recorded: Any, called: Any) -> Any:
        """``called`` without keys the recording lacks that hold an empty value or a default."""
        if not (isinstance(recorded, dict) and isinstance(called, dict)):
            same_lists = isinstance(recorded, list) and isinstance(called, list)
            if same_lists and len(recorded) == len(called):
                return [self.drop_added(tool, r, c) for r, c in zip(recorded, called, strict=True)]
            return called
        defaults = {**self.config.defaults.get("*", {}), **self.config.defaults.get(tool, {})}
        out = {}
        for key, value in called.items():
            if key not in recorded:
                if self.config.drop_empty_added_keys and _is_empty(value):
                    continue
                if key in defaults and defaults[key] == value:
                    continue
                out[key] = value
            else:
                out[key] = self.drop_added(tool, recorded[key], value)
        return out

    def pair(self, tool: str, recorded: Any, called: Any) -> tuple[Any, Any]:
        """``(recorded, called)`` in the normal form a tolerant match compares."""
        return self.value(recorded), self.value(self.drop_added(tool, recorded, called))


def _is_empty(value: Any) -> bool:
    """null, false or an empty string/list/object (0 is a value, not empty)."""
    if value is None or value is False:
        return True
    return isinstance(value, str | list | dict) and len(value) == 0
