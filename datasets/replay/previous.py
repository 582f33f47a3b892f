"""The previous replay of the same set: what changed since (read from its output folder).

``golden replay`` compares with the replay whose ``run_summary.json`` and
``regression_diff_result.parquet`` are in ``--previous DIR`` (default: the output folder, read
before it is overwritten), when that replay was of the same set (any version): cases that now
have differences and had none, cases fixed since, and the difference in rows per type.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq


@dataclass(slots=True)
class PreviousReplay:
    run_id: str
    baseline_version: str
    new_version: str | None
    gate: str
    cases_with_diffs: set[str]
    types: Counter[str]


@dataclass(slots=True)
class Changes:
    """This replay against the previous one."""

    previous: PreviousReplay
    new_cases: list[str] = field(default_factory=list)  # differences now, none before
    fixed_cases: list[str] = field(default_factory=list)  # differences before, none now
    type_delta: dict[str, int] = field(default_factory=dict)  # rows now - rows before


def set_name(ref: str) -> str:
    return ref.split("@", 1)[0]


def load_previous(folder: Path, baseline_version: str) -> PreviousReplay | None:
    """The replay in ``folder`` if it replayed the same set (else, or without one, None)."""
    summary_path = folder / "run_summary.json"
    diffs_path = folder / "regression_diff_result.parquet"
    if not summary_path.is_file():
        return None
    try:
        summary: dict[str, Any] = orjson.loads(summary_path.read_bytes())
        rows = pq.read_table(diffs_path, columns=["case_id", "diff_type"]).to_pylist()
    except (OSError, orjson.JSONDecodeError, ValueError):
        return None
    if set_name(str(summary.get("baseline_version", ""))) != set_name(baseline_version):
        return None
    return PreviousReplay(
        run_id=str(summary.get("run_id")),
        baseline_version=str(summary.get("baseline_version")),
        new_version=summary.get("new_version"),
        gate=str(summary.get("gate")),
        cases_with_diffs={r["case_id"] for r in rows},
        types=Counter(r["diff_type"] for r in rows),
    )


def compare(previous: PreviousReplay, run: Any) -> Changes:
    """What changed between ``previous`` and ``run`` (a ``ReplayRun``), over this run's cases."""
    now = {r.case.case_id for r in run.runs if r.check.diffs}
    replayed = {r.case.case_id for r in run.runs}
    types = Counter(d.diff_type for r in run.runs for d in r.check.diffs)
    delta = {t: types[t] - previous.types[t] for t in sorted(types.keys() | previous.types.keys())}
    return Changes(
        previous,
        new_cases=sorted(now - previous.cases_with_diffs),
        fixed_cases=sorted((previous.cases_with_diffs & replayed) - now),
        type_delta={t: d for t, d in delta.items() if d},
    )
