"""Stage-2 tolerances: the differences an ordinary agent's formatting may make, each named.

Each is small and declarative, switched on in ``matching`` (``configs/gate.yaml``):

* ``empty_added_key``: a key the recording lacks whose value is null/false/empty;
* ``declared_default``: a key the recording lacks at a default declared in ``matching.defaults``;
* ``recorded_default``: a key the recording lacks at the one value the recording holds for that
  key wherever it appears (an added ``"currency": "EUR"`` where every recorded amount is in EUR);
* ``number_form``: ``1`` = ``1.0``;
* ``numeric_text``: a number written as text, with or without thousands separators
  (``"1905.77"`` = ``"1,905.77"`` = ``1905.77``);
* ``date_format``: ``2024-05-20`` = ``05/20/2024`` = ``May 20, 2024``;
* ``text_case``: whitespace and case of declared text fields;
* ``query_similarity``: query-like text compared by similarity (parameter parity only).

``Normaliser.compare(tool, recorded, called)`` walks both values side by side and returns the
paths that differ and the tolerances that made the rest equal, so every row can name what it
forgave. ``Normaliser.value`` is the one-sided normal form (expected actions compare with it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from golden_distill.datasets.replay.config import MatchingSection

_DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%d.%m.%Y", "%Y/%m/%d", "%d %B %Y", "%B %d, %Y",
                 "%b %d, %Y", "%d %b %Y", "%Y%m%d")  # fmt: skip
#: Cheap pre-check: digits and letters in the shapes of the formats above (most text fails).
_DATE_LIKE = re.compile(
    r"^(?:\d{4}[-/]\d{1,2}[-/]\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{4}|\d{8}"
    r"|\d{1,2} [A-Za-z]{3,9} \d{4}|[A-Za-z]{3,9} \d{1,2}, \d{4})$"
)
#: A number as text: optional sign, digits with or without comma thousands separators, optional
#: decimals. No leading zeros (``"007"`` is an id, not seven).
_NUMBER_TEXT = re.compile(r"^[+-]?(?:0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)(?:\.\d+)?$")
_SPACES = re.compile(r"\s+")

EMPTY_ADDED_KEY, DECLARED_DEFAULT, RECORDED_DEFAULT = (
    "empty_added_key", "declared_default", "recorded_default"
)  # fmt: skip
NUMBER_FORM, NUMERIC_TEXT, DATE_FORMAT, TEXT_CASE, QUERY_SIMILARITY = (
    "number_form", "numeric_text", "date_format", "text_case", "query_similarity"
)  # fmt: skip


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


def as_number(text: str) -> float | None:
    """The number ``text`` writes (``"1,905.77"`` -> 1905.77), else None."""
    text = text.strip()
    if len(text) > 40 or not _NUMBER_TEXT.match(text):
        return None
    return float(text.replace(",", ""))


@dataclass(slots=True)
class Comparison:
    """What ``Normaliser.compare`` found: differing paths and the tolerances used."""

    differing: list[str] = field(default_factory=list)
    tolerances: set[str] = field(default_factory=set)

    @property
    def equal(self) -> bool:
        return not self.differing


class Normaliser:
    """The stage-2 tolerances of one config."""

    def __init__(
        self,
        config: MatchingSection,
        query_keys: frozenset[str] = frozenset(),
        query_similarity: float = 100.0,
    ) -> None:
        self.config = config
        self.text_fields = frozenset(k.lower() for k in config.text_fields)
        self.query_keys = query_keys
        self.query_similarity = query_similarity

    # -- one side ------------------------------------------------------------------------------
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
            if self.config.numeric_text:
                number = as_number(value)
                if number is not None:
                    return number
            if self.config.normalise_dates:
                date = as_date(value)
                if date is not None:
                    return date
        return value

    # -- both sides ----------------------------------------------------------------------------
    def compare(
        self,
        tool: str,
        recorded: Any,
        called: Any,
        recorded_defaults: Mapping[str, Any] | None = None,
        *,
        similar_queries: bool = False,
    ) -> Comparison:
        """``called`` against ``recorded``, side by side: the paths that differ and the
        tolerances that made the others equal. ``recorded_defaults``: key -> the one value the
        recording holds for it (``recorded_default``)."""
        defaults = {**self.config.defaults.get("*", {}), **self.config.defaults.get(tool, {})}
        out = Comparison()
        self._walk(recorded, called, "", None, defaults, recorded_defaults or {},
                   similar_queries, out)  # fmt: skip
        return out

    def _walk(
        self,
        rec: Any,
        got: Any,
        path: str,
        key: str | None,
        declared: Mapping[str, Any],
        recorded_defaults: Mapping[str, Any],
        queries: bool,
        out: Comparison,
    ) -> None:
        if type(rec) is type(got) and rec == got:
            return
        if isinstance(rec, dict) and isinstance(got, dict):
            for k, value in rec.items():
                sub = f"{path}.{k}" if path else str(k)
                if k not in got:
                    out.differing.append(sub)
                else:
                    self._walk(value, got[k], sub, k, declared, recorded_defaults, queries, out)
            for k in got.keys() - rec.keys():
                tolerance = self._added(k, got[k], declared, recorded_defaults)
                if tolerance is None:
                    out.differing.append(f"{path}.{k}" if path else str(k))
                else:
                    out.tolerances.add(tolerance)
            return
        if isinstance(rec, list) and isinstance(got, list) and len(rec) == len(got):
            for i, (a, b) in enumerate(zip(rec, got, strict=True)):
                self._walk(a, b, f"{path}[{i}]", key, declared, recorded_defaults, queries, out)
            return
        tolerance = self._leaf(rec, got, key, queries)
        if tolerance is None:
            out.differing.append(path or "arguments")
        else:
            out.tolerances.add(tolerance)

    def _added(
        self,
        key: str,
        value: Any,
        declared: Mapping[str, Any],
        recorded_defaults: Mapping[str, Any],
    ) -> str | None:
        if self.config.drop_empty_added_keys and _is_empty(value):
            return EMPTY_ADDED_KEY
        if key in declared and declared[key] == value:
            return DECLARED_DEFAULT
        if (
            self.config.recorded_defaults
            and key in recorded_defaults
            and recorded_defaults[key] == value
        ):
            return RECORDED_DEFAULT
        return None

    def _leaf(self, rec: Any, got: Any, key: str | None, queries: bool) -> str | None:
        """The tolerance under which two scalars are equal, else None."""
        if isinstance(rec, bool) or isinstance(got, bool):
            return None  # equal bools returned before; True is not 1
        config = self.config
        rec_number, got_number = _number(rec, config), _number(got, config)
        if rec_number is not None and got_number is not None and rec_number == got_number:
            if isinstance(rec, str) or isinstance(got, str):
                return NUMERIC_TEXT
            return NUMBER_FORM if config.normalise_numbers else None
        if not (isinstance(rec, str) and isinstance(got, str)):
            return None
        lowered = key.lower() if key is not None else None
        if lowered in self.text_fields and _fold(rec) == _fold(got):
            return TEXT_CASE
        if config.normalise_dates:
            date = as_date(rec)
            if date is not None and date == as_date(got):
                return DATE_FORMAT
        if queries and lowered in self.query_keys and fuzz.ratio(rec, got) >= self.query_similarity:
            return QUERY_SIMILARITY
        return None


def _number(value: Any, config: MatchingSection) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and config.numeric_text:
        return as_number(value)
    return None


def _fold(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


def _is_empty(value: Any) -> bool:
    """null, false or an empty string/list/object (0 is a value, not empty)."""
    if value is None or value is False:
        return True
    return isinstance(value, str | list | dict) and len(value) == 0


def recorded_defaults(values: Any) -> dict[str, Any]:
    """key -> value for every key that holds one and the same scalar value wherever it appears
    in ``values`` (recorded arguments and responses, at any depth)."""
    seen: dict[str, Any] = {}
    clash: set[str] = set()
    stack = [values]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if isinstance(v, dict | list):
                    stack.append(v)
                elif k not in clash:
                    if k in seen and seen[k] != v:
                        clash.add(k)
                        del seen[k]
                    else:
                        seen[k] = v
        elif isinstance(item, list):
            stack.extend(item)
    return seen
