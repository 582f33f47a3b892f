"""Field inventory: per tool and JSON path, how its leaves were handled (counts, never values).

Default deny only stays safe while someone looks at what the scanner sees: a new tool with an
``ssn`` field is scanned (and its values replaced when recognised), but a config line naming it
is better. Every run records, per (tool, path): how many leaves a rule owned (``rule``,
``key_field``, ``evidence``, ``non_personal``), how many were ``scanned``, ``unknown_id``,
``verbatim`` or ``verbatim_misfit``, the entity types the scanner found there
(``found:EMAIL_ADDRESS``) and what the verifier found after scrubbing (``verifier:...``). The
manifest keeps it; the report lists paths with verifier findings and unclassified paths where
personal data was found; ``golden fields`` prints it and proposes config lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

_INDEX = re.compile(r"\[\d+\]")
#: Handling kinds a rule owns (not proposals for config).
OWNED = frozenset({"rule", "key_field", "evidence", "non_personal", "verbatim"})

FieldKey = tuple[str, str, str]  # (tool, path, handling-or-finding)


def location_pattern(location: str) -> str:
    """``steps[3].response`` -> ``steps.response``."""
    return _INDEX.sub("", location)


_SAFE_KEY = re.compile(r"^[A-Za-z_][A-Za-z_\-]{0,38}\d{0,2}$")
_SAFE_TOOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:/-]{0,127}$")
_LONG_DIGITS = re.compile(r"\d{5,}")
WITHHELD_KEY = "*"
_STEP_FIELD = re.compile(r"steps\[(\d+)\]\.(\w+)")
WITHHELD_TOOL = "(tool name withheld)"


@lru_cache(maxsize=1 << 16)
def safe_key(key: str) -> str:
    """A path component as recorded: object keys that could be data (ids, names, e-mails,
    anything with spaces, digits or non-ASCII) become ``*``; key *names* stay."""
    return key if _SAFE_KEY.match(key) else WITHHELD_KEY


@lru_cache(maxsize=1 << 14)
def safe_tool(name: str) -> str:
    """A tool name as recorded: withheld unless it has a tool name's shape."""
    return name if _SAFE_TOOL.match(name) and not _LONG_DIGITS.search(name) else WITHHELD_TOOL


def safe_path(base: str, path: Iterable[str]) -> str:
    return ".".join((base, *(safe_key(str(k)) for k in path)))


def tool_and_path(
    location: str, step_names: list[str], json_path: Iterable[str]
) -> tuple[str, str]:
    """The tool a slot belongs to (its step's name, else ``(case)``) and the leaf's path."""
    tool = "(case)"
    step, field, pattern = _location_parts(location)
    if 0 <= step < len(step_names):
        tool = safe_tool(step_names[step]) if step_names[step] else "-"
        base = field
    else:
        base = pattern
    return tool, safe_path(base, json_path)


@lru_cache(maxsize=1 << 14)
def _location_parts(location: str) -> tuple[int, str, str]:
    """(step index or -1, the step's field, ``location_pattern``) of a slot location: the same
    few hundred locations (``steps[3].response``) recur in every case of a run."""
    m = _STEP_FIELD.match(location)
    if m:
        return int(m.group(1)), m.group(2), location_pattern(location)
    return -1, "", location_pattern(location)


def to_nested(counts: Mapping[FieldKey, int]) -> dict[str, dict[str, dict[str, int]]]:
    """``{tool: {path: {handling: count}}}``, sorted, for manifests and reports."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for (tool, path, kind), n in sorted(counts.items()):
        out.setdefault(tool, {}).setdefault(path, {})[kind] = int(n)
    return out


def from_nested(nested: Mapping[str, Mapping[str, Mapping[str, int]]]) -> Counter[FieldKey]:
    counts: Counter[FieldKey] = Counter()
    for tool, paths in (nested or {}).items():
        for path, kinds in paths.items():
            for kind, n in kinds.items():
                counts[(tool, path, kind)] += int(n)
    return counts


def verifier_paths(nested: Mapping[str, Any]) -> list[tuple[str, str, dict[str, int]]]:
    """(tool, path, {entity: count}) where the verifier found something after scrubbing."""
    out = []
    for tool, paths in nested.items():
        for path, kinds in paths.items():
            found = {k.split(":", 1)[1]: n for k, n in kinds.items() if k.startswith("verifier:")}
            if found:
                out.append((tool, path, found))
    return out


def unclassified_findings(nested: Mapping[str, Any]) -> list[tuple[str, str, dict[str, int]]]:
    """(tool, path, {entity: count}) for paths no rule owns where the scanner found data."""
    out = []
    for tool, paths in nested.items():
        for path, kinds in paths.items():
            found = {k.split(":", 1)[1]: n for k, n in kinds.items() if k.startswith("found:")}
            if found and "scanned" in kinds and not (OWNED & set(kinds)):
                out.append((tool, path, found))
    return out


def new_paths(nested: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[str]:
    """``tool path`` entries not in the previous version's inventory (all when none)."""
    before = {(t, p) for t, paths in (previous or {}).items() for p in paths}
    return [f"{t} {p}" for t, paths in nested.items() for p in paths if (t, p) not in before]


def proposals(nested: Mapping[str, Any]) -> list[str]:
    """Config lines for unclassified paths that look sensitive (a finding was made there)."""
    lines = []
    seen: set[str] = set()
    for _tool, path, found in unclassified_findings(nested):
        key = path.rsplit(".", 1)[-1]
        if not key or key in seen or key in {"content", "text", "user_input", "answer_text"}:
            continue
        seen.add(key)
        entity = max(found, key=lambda e: found[e])
        lines.append(f'    "{key}": {entity}   # {path}: {sum(found.values())} finding(s)')
    return lines
