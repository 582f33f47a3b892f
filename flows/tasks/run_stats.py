"""Counting what a run did, for the report, the table artifact and the manifest.

Pure functions over shard results, the selection and the published table: counts, reason codes,
funnel/tool/system names and pseudonymised tenant ids only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import polars as pl

from golden_distill.filters.trust import trust_by_split
from golden_distill.flows.tasks.jobs import RedactResult, ShardResult
from golden_distill.redaction.inventory import from_nested, to_nested

SUMMED = ("records_read", "cases_read", "in_window", "candidates", "bytes_read")
MERGED = ("quarantined",)


def merge_shard_stats(results: Iterable[ShardResult]) -> dict[str, Any]:
    """Sum every shard's counts; per-stage seconds are summed too (task time, not wall time)."""
    totals: dict[str, Any] = {key: 0 for key in SUMMED}
    merged: dict[str, Counter[str]] = {key: Counter() for key in MERGED}
    seconds: Counter[str] = Counter()
    for result in results:
        for key in SUMMED:
            totals[key] += int(result.stats.get(key, 0) or 0)
        for key in MERGED:
            merged[key].update({str(k): int(v) for k, v in (result.stats.get(key) or {}).items()})
        seconds.update(result.seconds)
    totals.update({key: dict(counter) for key, counter in merged.items()})
    totals["shard_task_seconds"] = {k: round(v, 3) for k, v in seconds.items()}
    return totals


def merge_redaction_stats(results: Iterable[RedactResult]) -> dict[str, Any]:
    """Entity counts and refusals over every redaction task (all rounds)."""
    entities: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    inventory: Counter[tuple[str, str, str]] = Counter()
    seconds = 0.0
    uncovered = 0
    for result in results:
        uncovered += int(result.stats.get("keys_not_in_run_keys") or 0)
        inventory.update(from_nested(result.stats.get("field_inventory") or {}))
        entities.update(result.stats.get("redaction") or {})
        refused.update(result.stats.get("redaction_quarantined") or {})
        seconds += result.seconds
    return {
        "redaction": dict(entities),
        "redaction_quarantined": dict(refused),
        "field_inventory": to_nested(inventory),
        "redact_task_seconds": round(seconds, 3),
        # original keys a redaction met that the key pass had not listed: 0 unless a bug
        "keys_not_in_run_keys": uncovered,
    }


def _counts(series: pl.Series) -> dict[str, int]:
    counts = series.drop_nulls().value_counts()
    name = series.name
    return {str(row[name]): int(row["count"]) for row in counts.iter_rows(named=True)}


def published_stats(table: pl.DataFrame) -> dict[str, Any]:
    """Per-funnel counts and tenant/system/tool coverage of the published cases."""
    if table.height == 0:
        return {"published": 0, "published_per_funnel": {}, "coverage": {}}
    funnels = _counts(table.select(pl.col("funnels").explode().alias("funnel")).to_series())
    steps = table.select(pl.col("case_id"), pl.col("steps")).explode("steps").unnest("steps")
    # A case counts once per tool / system it uses, however often it calls it.
    tools = steps.select("case_id", "name").unique().get_column("name")
    systems = steps.select("case_id", "system").unique().get_column("system")
    return {
        "published": table.height,
        "case_table": case_table(table),
        "published_per_funnel": funnels,
        "trust_by_split": trust_by_split(table),
        "coverage": {
            "tenant": _counts(table.get_column("tenant_id")),
            "system": _counts(systems),
            "tool": _counts(tools),
            **{c: _counts(table.get_column(c)) for c in ("split", "trust") if c in table.columns},
        },
    }


#: Columns of the report's case table (ids, funnel reasons, numbers: no record text).
CASE_TABLE_COLUMNS = ("case_id", "funnel_reasons", "value_score", "cluster_size", "split", "trust")


#: Rows of the report's case table: the first published cases by case id (every published case
#: carries its reasons itself; `golden sets show REF --case ID` explains any). A row per case
#: cost ~1 KB of Python objects per published case in the flow's process at publish time.
CASE_TABLE_ROWS = 2000


def case_table(table: pl.DataFrame) -> list[dict[str, Any]]:
    """The first ``CASE_TABLE_ROWS`` published cases by case id: why each is in (funnel
    reasons), its score, cluster size, split and trust (the review state)."""
    columns = [c for c in CASE_TABLE_COLUMNS if c in table.columns]
    return table.select(columns).sort("case_id").head(CASE_TABLE_ROWS).to_dicts()


def merge_published_stats(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Sum ``published_stats`` of several parts of one version."""
    cases: list[dict[str, Any]] = []
    total = 0
    per_funnel: Counter[str] = Counter()
    coverage: dict[str, Counter[str]] = {}
    by_split: dict[str, Counter[str]] = {}
    for part in parts:
        for split, counts in (part.get("trust_by_split") or {}).items():
            by_split.setdefault(split, Counter()).update(counts)
        total += int(part.get("published", 0))
        cases.extend(part.get("case_table") or [])
        per_funnel.update(part.get("published_per_funnel") or {})
        for dim, counts in (part.get("coverage") or {}).items():
            coverage.setdefault(dim, Counter()).update(counts)
    return {
        "published": total,
        "case_table": sorted(cases, key=lambda r: r["case_id"])[:CASE_TABLE_ROWS],
        "published_per_funnel": dict(per_funnel),
        "trust_by_split": {split: dict(counts) for split, counts in sorted(by_split.items())},
        "coverage": {dim: dict(counts) for dim, counts in coverage.items()},
    }


def change_against(
    parent: str | None, parent_ids: set[str] | None, ids: set[str]
) -> dict[str, Any]:
    """How this version's case ids differ from the parent version's."""
    if parent is None or parent_ids is None:
        return {"parent": None}
    return {
        "parent": parent,
        "added": len(ids - parent_ids),
        "removed": len(parent_ids - ids),
        "kept": len(ids & parent_ids),
    }
