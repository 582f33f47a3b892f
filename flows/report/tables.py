"""The counts table (Prefect table artifact, and the report's summary): section, item, count."""

from __future__ import annotations

from typing import Any

#: (stats key, section label) of the ``{name: count}`` mappings listed in the counts table.
MAPPING_SECTIONS = (
    ("quarantined", "quarantined"),
    ("funnels", "selected per funnel"),
    ("funnel_overlaps", "funnel overlap"),
    ("cut_by_quotas", "cut by quotas"),
    ("left_the_set", "left the set (carried cases)"),
    ("not_selected", "not selected"),
    ("cluster_sizes", "clusters of size"),
    ("redaction", "redacted entities"),
    ("redaction_quarantined", "quarantined by redaction"),
    ("published_per_funnel", "published per funnel"),
)
SCALARS = (
    ("records_read", "records read"),
    ("cases_read", "cases read"),
    ("in_window", "cases in time window"),
    ("candidates", "candidates (after funnels)"),
    ("after_quotas", "after quotas"),
    ("removed_by_dedup", "removed by dedup"),
    ("published", "published cases"),
)


def counts_rows(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """Flat rows ``{"section", "item", "count"}`` in report order."""
    rows: list[dict[str, Any]] = []
    for key, label in SCALARS:
        if key in stats and stats[key] is not None:
            rows.append({"section": "totals", "item": label, "count": int(stats[key])})
    for key, label in MAPPING_SECTIONS:
        for name, count in sorted((stats.get(key) or {}).items(), key=lambda kv: str(kv[0])):
            rows.append({"section": label, "item": str(name), "count": int(count)})
    for dimension, counts in sorted((stats.get("coverage") or {}).items()):
        for name, count in sorted(counts.items()):
            rows.append({"section": f"coverage by {dimension}", "item": name, "count": int(count)})
    change = stats.get("change") or {}
    for key in ("added", "removed", "kept"):
        if key in change:
            rows.append({"section": "change vs parent", "item": key, "count": int(change[key])})
    return rows
