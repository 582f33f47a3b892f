"""`golden sets show REF --case ID`: why one case is in a version, its cluster, and its history.

Everything printed comes from the published (redacted) version: funnel reasons (built from
counts, tool names and numbers), scores, cluster members' ids and roles, split and trust.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl


def _row(golden: Any, case_id: str) -> dict[str, Any] | None:
    table = pl.from_arrow(golden.read_table())
    assert isinstance(table, pl.DataFrame)
    rows = table.filter(pl.col("case_id") == case_id).to_dicts()
    return rows[0] if rows else None


def case_report(store: Any, golden: Any, case_id: str, open_version: Any) -> dict[str, Any]:
    """One case of ``golden``: reasons, score, cluster (members from clusters.parquet), split,
    trust, and per version of the set whether it was published and with which reasons."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.versions import list_versions

    row = _row(golden, case_id)
    out: dict[str, Any] = {"set": golden.name, "version": golden.version, "case_id": case_id}
    if row is None:
        out["published"] = False
    else:
        out.update(
            published=True,
            funnels=row.get("funnels") or [],
            reasons=json.loads(row.get("funnel_reasons") or "{}"),
            value_score=row.get("value_score"),
            split=row.get("split"),
            trust=row.get("trust"),
            cluster_id=row.get("cluster_id"),
            cluster_size=row.get("cluster_size"),
            reward=(row.get("outcome") or {}).get("reward"),
        )
    clusters = golden.clusters()
    if clusters is not None and row is not None and row.get("cluster_id"):
        frame = pl.from_arrow(clusters)
        assert isinstance(frame, pl.DataFrame)
        members = frame.filter(pl.col("cluster_id") == row["cluster_id"]).sort("rank")
        out["cluster_members"] = members.select(
            "case_id", "role", "merged_by", "distance_to_representative"
        ).to_dicts()
    history = []
    for version in list_versions(store, golden.name):
        other = open_version(version)
        found = _row(other, case_id)
        history.append(
            {
                "version": version,
                "published": found is not None,
                "funnels": (found or {}).get("funnels") or [],
                "value_score": (found or {}).get("value_score"),
                "split": (found or {}).get("split"),
                "trust": (found or {}).get("trust"),
            }
        )
    out["history"] = history
    return out


def render_case(report: dict[str, Any]) -> str:
    lines = [f"{report['set']}@{report['version']}  case {report['case_id']}"]
    if not report.get("published"):
        lines.append("  not in this version")
    else:
        lines.append(
            f"  funnels {', '.join(report['funnels']) or '-'}; value score "
            f"{report['value_score']}; split {report['split']}; trust {report['trust']}; "
            f"reward {report['reward']}"
        )
        for funnel, reason in report["reasons"].items():
            lines.append(f"  why {funnel}: {reason}")
        lines.append(f"  cluster {report['cluster_id']} ({report['cluster_size']} runs)")
        for m in report.get("cluster_members") or []:
            lines.append(
                f"    {m['case_id']}  {m['role']}  merged by {m['merged_by']}  "
                f"distance {m['distance_to_representative']:.3f}"
            )
    lines.append("  history")
    for h in report["history"]:
        state = (
            f"published ({', '.join(h['funnels'])}; score {h['value_score']}; split "
            f"{h['split']}; trust {h['trust']})"
            if h["published"]
            else "not published"
        )
        lines.append(f"    {h['version']}  {state}")
    return "\n".join(lines)
