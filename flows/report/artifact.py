"""The run summary a browser shows in Prefect's UI: a markdown artifact with the headline figures
and what changed, keyed per store and set.

The HTML report stays in the store (a ``file://`` or ``s3://`` location the UI cannot open), so
the artifact carries the figures themselves: counts, reason codes, funnel and tool names and
pseudonymised tenants, never record text. The key names the set and a digest of the store, so
two stores with a set of the same name keep apart histories, and each night's summary lands
in its key's history.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

#: Drift rows shown (largest share shifts first); the HTML report has them all.
DRIFT_ROWS = 5


def artifact_key(store_url: str, set_name: str, suffix: str = "") -> str:
    """``golden-<set>-<store digest>[-suffix]``: Prefect keys take lowercase letters, digits
    and dashes only."""
    digest = hashlib.sha256(store_url.rstrip("/").encode()).hexdigest()[:10]
    slug = re.sub(r"[^a-z0-9]+", "-", set_name.lower()).strip("-")[:40] or "set"
    return "-".join(p for p in ("golden", slug, digest, suffix) if p)


def _n(value: Any) -> str:
    return "–" if value is None else f"{int(value):,}"


def _cell(value: Any) -> str:
    """A value safe inside a markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ").replace("`", "'")


def _total(mapping: Any) -> int:
    return sum(int(v) for v in (mapping or {}).values())


def summary_markdown(
    set_name: str, version: str, store: str, report: str, stats: dict[str, Any]
) -> str:
    """The artifact's markdown for one published (or reused) version."""
    since, until = stats.get("since"), stats.get("until")
    window = f"{since or 'start'} .. {until or 'now'}" if since or until else "all recordings"
    lines = [
        f"# `{_cell(set_name)}@{_cell(version)}`",
        "",
        f"Store `{_cell(store)}`, window {_cell(window)}.",
        "",
        "| figure | count |",
        "|---|---:|",
        f"| published cases | **{_n(stats.get('published'))}** |",
        f"| records read | {_n(stats.get('records_read'))} |",
        f"| quarantined (bad input) | {_n(_total(stats.get('quarantined')))} |",
        f"| funnel candidates | {_n(stats.get('candidates'))} |",
        f"| cut by quotas | {_n(_total(stats.get('cut_by_quotas')))} |",
        f"| removed by dedup | {_n(stats.get('removed_by_dedup'))} |",
        f"| refused by redaction | {_n((stats.get('redaction_refusals') or {}).get('refused'))} |",
        f"| shards (from cache) | {_n(stats.get('shards'))} ({_n(stats.get('shards_cached'))}) |",
        "",
        "## Changes",
        "",
    ]
    change = stats.get("change") or {}
    if change.get("parent"):
        lines.append(
            f"Against `{_cell(change['parent'])}`: **+{_n(change.get('added'))}** added, "
            f"**-{_n(change.get('removed'))}** removed, {_n(change.get('kept'))} kept."
        )
    else:
        lines.append("The set's first version.")
    left = stats.get("left_the_set") or {}
    if left:
        reasons = ", ".join(f"{_cell(k)} {_n(v)}" for k, v in sorted(left.items()))
        lines.append(f"Left the set: {reasons}.")
    drift = (stats.get("drift") or [])[:DRIFT_ROWS]
    if drift:
        lines += [
            "",
            f"Largest shifts against `{_cell(stats.get('pinned'))}`:",
            "",
            "| dimension | value | before | after |",
            "|---|---|---:|---:|",
        ]
        lines += [
            f"| {_cell(r['dimension'])} | {_cell(r['value'])} "
            f"| {float(r['before']):.1%} | {float(r['after']):.1%} |"
            for r in drift
        ]
    lines += ["", f"Full report (HTML, in the store): `{_cell(report)}`", ""]
    return "\n".join(lines)
