"""`golden sets show REF --case ID` and `golden sets why ID`: why one case is in a version or
not, its cluster, and its history across the set's versions (when it entered, when it left
and why).

Everything printed comes from the store: the published (redacted) cases, the clusters file,
each version's decisions table (``datasets/store/decisions.py``: ids, funnel names, scores
and reason codes, no record content) and the review log (a reviewer's reason for a
rejection).
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import polars as pl

from golden_distill.datasets.store.decisions import PUBLISHED, decision_of
from golden_distill.filters.decision_table import explain


def _row(golden: Any, case_id: str) -> dict[str, Any] | None:
    """The published row of ``case_id`` (one row group read), None when not in the version."""
    try:
        golden.get(case_id)
    except KeyError:
        return None
    table = pl.from_arrow(golden.read_table())
    assert isinstance(table, pl.DataFrame)
    rows = table.filter(pl.col("case_id") == case_id).to_dicts()
    return rows[0] if rows else None


def _is_published(golden: Any, case_id: str, decision: dict[str, Any] | None) -> bool:
    if golden.has_decisions:
        return decision is not None and decision.get("status") == PUBLISHED
    try:
        golden.get(case_id)
    except KeyError:
        return False
    return True


def review_reasons(store: Any, set_name: str) -> dict[str, dict[str, Any]]:
    """case_id -> the latest review decision on it (``filters/review.py``'s log)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.filters.review import log_path, parse_log

    try:
        entries = parse_log(store.read_bytes(log_path(set_name)))
    except FileNotFoundError:
        return {}
    latest: dict[str, dict[str, Any]] = {}
    for entry in sorted(entries, key=lambda e: str(e.get("at") or "")):
        latest[str(entry.get("case_id"))] = entry
    return latest


def _history(store: Any, name: str, case_id: str, open_version: Any) -> list[dict[str, Any]]:
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.versions import list_versions

    history = []
    for version in list_versions(store, name):
        other = open_version(version)
        decision = decision_of(other.decisions(), case_id)
        published = _is_published(other, case_id, decision)
        entry: dict[str, Any] = {"version": version, "published": published}
        if decision is not None:
            entry["status"] = decision["status"]
            entry["why"] = explain(decision)
        elif not other.has_decisions:
            entry["status"] = PUBLISHED if published else None
            entry["why"] = "published" if published else "(published before decisions tables)"
        else:
            entry["status"] = None
            entry["why"] = "not read by the run that made this version"
        history.append(entry)
    return history


def _timeline(history: list[dict[str, Any]]) -> dict[str, Any]:
    """When the case was first published, and when it last left the set and why."""
    first = next((h["version"] for h in history if h["published"]), None)
    left = None
    for before, after in pairwise(history):
        if before["published"] and not after["published"]:
            left = {"version": after["version"], "status": after.get("status"),
                    "why": after.get("why")}  # fmt: skip
    return {"first_published": first, "left": left}


def case_report(store: Any, golden: Any, case_id: str, open_version: Any) -> dict[str, Any]:
    """One case of ``golden``: whether it is published, why (reasons, score, cluster, split,
    trust for a published case; the decision for any case the run read), its cluster's
    members, the reviewer's reason when rejected, and its history across the set's versions."""
    row = _row(golden, case_id)
    decision = decision_of(golden.decisions(), case_id)
    out: dict[str, Any] = {"set": golden.name, "version": golden.version, "case_id": case_id}
    out["published"] = row is not None
    if row is not None:
        out.update(
            funnels=row.get("funnels") or [],
            reasons=json.loads(row.get("funnel_reasons") or "{}"),
            value_score=row.get("value_score"),
            split=row.get("split"),
            trust=row.get("trust"),
            cluster_id=row.get("cluster_id"),
            cluster_size=row.get("cluster_size"),
            reward=(row.get("outcome") or {}).get("reward"),
        )
    if decision is not None:
        out["decision"] = decision
        out["why"] = explain(decision)
        out.setdefault("cluster_id", decision.get("cluster_id"))
    elif golden.has_decisions and row is None:
        out["why"] = "not read by the run that made this version"
    review = review_reasons(store, golden.name).get(case_id)
    if review is not None:
        out["review"] = {k: review.get(k) for k in ("decision", "reason", "reviewer", "at")}
    clusters = golden.clusters()
    if clusters is not None and out.get("cluster_id"):
        frame = pl.from_arrow(clusters)
        assert isinstance(frame, pl.DataFrame)
        members = frame.filter(pl.col("cluster_id") == out["cluster_id"]).sort("rank")
        out["cluster_members"] = members.select(
            "case_id", "role", "merged_by", "distance_to_representative"
        ).to_dicts()
    out["history"] = _history(store, golden.name, case_id, open_version)
    out.update(_timeline(out["history"]))
    return out


def render_case(report: dict[str, Any]) -> str:
    lines = [f"{report['set']}@{report['version']}  case {report['case_id']}"]
    if report.get("published"):
        lines.append(
            f"  published: funnels {', '.join(report['funnels']) or '-'}; value score "
            f"{report['value_score']}; split {report['split']}; trust {report['trust']}; "
            f"reward {report['reward']}"
        )
        for funnel, reason in report["reasons"].items():
            lines.append(f"  why {funnel}: {reason}")
    else:
        lines.append(f"  not in this version: {report.get('why') or 'no decision recorded'}")
    review = report.get("review")
    if review and review.get("decision") == "reject":
        lines.append(f"  review: rejected by {review.get('reviewer')}: {review.get('reason')}")
    elif review:
        lines.append(f"  review: {review.get('decision')} by {review.get('reviewer')}")
    if report.get("cluster_id"):
        size = report.get("cluster_size") or len(report.get("cluster_members") or []) or "?"
        lines.append(f"  cluster {report['cluster_id']} ({size} runs)")
    for m in report.get("cluster_members") or []:
        distance = m.get("distance_to_representative")
        lines.append(
            f"    {m['case_id']}  {m['role']}  merged by {m['merged_by']}  "
            f"distance {distance if distance is None else f'{distance:.3f}'}"
        )
    lines.extend(_render_history(report))
    return "\n".join(lines)


def _render_history(report: dict[str, Any]) -> list[str]:
    lines = ["  history"]
    for h in report["history"]:
        lines.append(f"    {h['version']}  {h.get('why') or '-'}")
    if report.get("first_published"):
        lines.append(f"  first published in {report['first_published']}")
    left = report.get("left")
    if left:
        lines.append(f"  left the set in {left['version']}: {left.get('why')}")
    return lines


def why_report(store: Any, set_name: str, case_id: str, open_version: Any) -> dict[str, Any]:
    """`golden sets why`: the case's decision in every version of the set, when it was first
    published, when it left and why; ``latest``: its state in the newest version."""
    history = _history(store, set_name, case_id, open_version)
    out: dict[str, Any] = {"set": set_name, "case_id": case_id, "history": history}
    out.update(_timeline(history))
    review = review_reasons(store, set_name).get(case_id)
    if review is not None:
        out["review"] = {k: review.get(k) for k in ("decision", "reason", "reviewer", "at")}
    out["known"] = any(h.get("status") for h in history)
    return out


def render_why(report: dict[str, Any]) -> str:
    lines = [f"{report['set']}  case {report['case_id']}"]
    if not report.get("known"):
        lines.append("  no version of this set read or published this case")
    if report["history"]:
        last = report["history"][-1]
        state = "published" if last["published"] else f"not published ({last.get('why')})"
        lines.append(f"  newest version {last['version']}: {state}")
    review = report.get("review")
    if review and review.get("decision") == "reject":
        lines.append(f"  review: rejected by {review.get('reviewer')}: {review.get('reason')}")
    lines.extend(_render_history(report))
    return "\n".join(lines)
