"""What changed between two versions: cases added, removed and changed, funnels, coverage.

Cases are matched by case_id; a case is *changed* when any field differs, and the diff names
which top-level fields (``steps``, ``outcome``...), never their values. Coverage compares the
tools and systems the two versions' steps exercise, so a reviewer sees what a replay would no
longer test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from golden_distill.datasets.reader import GoldenSet


@dataclass(slots=True)
class VersionDiff:
    a: str
    b: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)  # case_id -> changed fields
    funnels: dict[str, tuple[int, int]] = field(default_factory=dict)  # funnel -> (a, b)
    totals: tuple[int, int] = (0, 0)
    tools_added: list[str] = field(default_factory=list)
    tools_lost: list[str] = field(default_factory=list)
    systems_added: list[str] = field(default_factory=list)
    systems_lost: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "funnels": {k: {"a": v[0], "b": v[1]} for k, v in self.funnels.items()},
            "totals": {"a": self.totals[0], "b": self.totals[1]},
            "tools_added": self.tools_added,
            "tools_lost": self.tools_lost,
            "systems_added": self.systems_added,
            "systems_lost": self.systems_lost,
        }


def _coverage(table: pa.Table, field_name: str) -> set[str]:
    steps = pc.list_flatten(table.column("steps"))
    if len(steps) == 0:
        return set()
    values = pc.struct_field(steps, field_name)
    return {v for v in pc.unique(values).to_pylist() if v is not None}


def _rows_by_id(table: pa.Table, ids: list[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    picked = table.filter(pc.is_in(table.column("case_id"), pa.array(ids)))
    return {row["case_id"]: row for row in picked.to_pylist()}


def diff_sets(a: GoldenSet, b: GoldenSet) -> VersionDiff:
    ta, tb = a.read_table(), b.read_table()
    result = VersionDiff(f"{a.name}@{a.version}", f"{b.name}@{b.version}")
    ids_a = set(ta.column("case_id").to_pylist())
    ids_b = set(tb.column("case_id").to_pylist())
    result.added = sorted(ids_b - ids_a)
    result.removed = sorted(ids_a - ids_b)
    common = sorted(ids_a & ids_b)
    rows_a, rows_b = _rows_by_id(ta, common), _rows_by_id(tb, common)
    for case_id in common:
        ra, rb = rows_a[case_id], rows_b[case_id]
        fields = [name for name in ra if ra[name] != rb.get(name)]
        if fields:
            result.changed[case_id] = fields
    per_a = a.manifest["counts"].get("per_funnel", {})
    per_b = b.manifest["counts"].get("per_funnel", {})
    result.funnels = {f: (per_a.get(f, 0), per_b.get(f, 0)) for f in sorted({*per_a, *per_b})}
    result.totals = (ta.num_rows, tb.num_rows)
    tools_a, tools_b = _coverage(ta, "name"), _coverage(tb, "name")
    systems_a, systems_b = _coverage(ta, "system"), _coverage(tb, "system")
    result.tools_added, result.tools_lost = sorted(tools_b - tools_a), sorted(tools_a - tools_b)
    result.systems_added = sorted(systems_b - systems_a)
    result.systems_lost = sorted(systems_a - systems_b)
    return result
