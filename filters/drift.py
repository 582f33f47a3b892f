"""What changed between two versions of a golden set, in terms a data engineer reads.

* **Case changes**: cases in both versions whose *content* differs, with what changed: funnels,
  reasons, score, cluster size, split, trust, outcome and expected outcome, before and after.
  Where a run was read from (``source``) and cluster ids (names derived from member ids) are
  not content: a case whose recording moved to another file is not "changed".
* **Drift**: shares of the set per funnel, tool, write action, tenant, outcome, split, trust and
  redacted entity type, in each version, largest shifts first.

Pure functions over two published tables (polars frames of GOLDEN_SCHEMA rows, redacted). The
values shown are the published (redacted) ones; request and answer text are never shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import polars as pl

#: Columns that are not a case's content (where it was read from; cluster names).
NOT_CONTENT = ("source", "cluster_id")
#: Changed columns shown with their before/after values (small, and safe: redacted or ours).
SHOWN = ("funnels", "funnel_reasons", "value_score", "cluster_size", "split", "trust")


def _shown(row: dict[str, Any], column: str) -> Any:
    value = row.get(column)
    if column == "funnel_reasons" and isinstance(value, str):
        return json.loads(value or "{}")
    return value


def _outcome(row: dict[str, Any]) -> dict[str, Any]:
    outcome = row.get("outcome") or {}
    return {k: outcome.get(k) for k in ("final_state", "reward", "handoff", "status")}


def case_changes(a: pl.DataFrame, b: pl.DataFrame) -> list[dict[str, Any]]:
    """Per case in both versions whose content differs: the changed columns, and before/after
    values of the SHOWN ones, the outcome and the expected outcome."""
    columns = [c for c in a.columns if c in b.columns and c not in NOT_CONTENT and c != "case_id"]
    hashed_a = a.select("case_id", *(pl.col(c).hash().alias(c) for c in columns))
    hashed_b = b.select("case_id", *(pl.col(c).hash().alias(c) for c in columns))
    joined = hashed_a.join(hashed_b, on="case_id", how="inner", suffix="_b")
    differs = joined.select(
        "case_id", *((pl.col(c) != pl.col(f"{c}_b")).fill_null(True).alias(c) for c in columns)
    ).filter(pl.any_horizontal(columns) if columns else pl.lit(False))
    if differs.height == 0:
        return []
    ids = differs.get_column("case_id")
    rows_a = {r["case_id"]: r for r in a.filter(pl.col("case_id").is_in(ids.implode())).to_dicts()}
    rows_b = {r["case_id"]: r for r in b.filter(pl.col("case_id").is_in(ids.implode())).to_dicts()}
    out = []
    for flags in differs.sort("case_id").iter_rows(named=True):
        case_id = flags["case_id"]
        changed = [c for c in columns if flags[c]]
        before, after = rows_a[case_id], rows_b[case_id]
        detail = {c: {"before": _shown(before, c), "after": _shown(after, c)}
                  for c in changed if c in SHOWN}  # fmt: skip
        if "outcome" in changed:
            detail["outcome"] = {"before": _outcome(before), "after": _outcome(after)}
        if "expected" in changed:
            detail["expected"] = {"before": before.get("expected"), "after": after.get("expected")}
        out.append({"case_id": case_id, "changed": changed, "detail": detail})
    return out


def _shares(counts: Iterable[tuple[str, int]], total: int) -> dict[str, float]:
    return {str(k): round(v / total, 4) for k, v in counts if total}


def _list_shares(frame: pl.DataFrame, values: pl.Expr) -> dict[str, float]:
    """Share of cases that have each value of a per-case list."""
    if frame.height == 0:
        return {}
    exploded = frame.select("case_id", v=values).explode("v").drop_nulls().unique()
    counts = exploded.group_by("v").len().iter_rows()
    return _shares(counts, frame.height)


def _entity_shares(frame: pl.DataFrame) -> dict[str, float]:
    totals: dict[str, int] = {}
    if "redaction" not in frame.columns:
        return {}
    for text in frame.get_column("redaction").drop_nulls().to_list():
        for entity, count in json.loads(text or "{}").items():
            totals[entity] = totals.get(entity, 0) + int(count)
    grand = sum(totals.values())
    return _shares(totals.items(), grand)


def mix(frame: pl.DataFrame) -> dict[str, dict[str, float]]:
    """Shares of one version per dimension (each a share of its cases, entities of entities)."""
    step = pl.col("steps").list.eval
    reward = pl.col("outcome").struct.field("reward")
    handoff = pl.col("outcome").struct.field("handoff").fill_null(False)
    outcome = (
        pl.when(handoff)
        .then(pl.lit("hand-off"))
        .when(reward >= 1)
        .then(pl.lit("reward 1"))
        .when(reward <= 0)
        .then(pl.lit("failed (reward 0)"))
        .otherwise(pl.lit("no reward recorded"))
    )
    writes = step(
        pl.element()
        .filter(pl.element().struct.field("is_mutating").fill_null(False))
        .struct.field("name")
    )
    dims: dict[str, dict[str, float]] = {
        "funnel": _list_shares(frame, pl.col("funnels")),
        "tool": _list_shares(frame, step(pl.element().struct.field("name"))),
        "write action": _list_shares(frame, writes),
        "tenant": _list_shares(frame, pl.concat_list(pl.col("tenant_id").fill_null("(none)"))),
        "outcome": _list_shares(frame, pl.concat_list(outcome)),
        "entity type": _entity_shares(frame),
    }
    for column in ("split", "trust"):
        if column in frame.columns:
            dims[column] = _list_shares(frame, pl.concat_list(pl.col(column).fill_null("(none)")))
    return dims


def drift(a: pl.DataFrame, b: pl.DataFrame, top: int | None = None) -> list[dict[str, Any]]:
    """Every (dimension, value) whose share moved, largest shift first:
    ``{dimension, value, before, after, shift}`` (shares in [0, 1], shift = after - before)."""
    mix_a, mix_b = mix(a), mix(b)
    rows = []
    for dim in mix_a.keys() | mix_b.keys():
        before, after = mix_a.get(dim, {}), mix_b.get(dim, {})
        for value in before.keys() | after.keys():
            shift = round(after.get(value, 0.0) - before.get(value, 0.0), 4)
            if shift:
                rows.append(
                    {
                        "dimension": dim,
                        "value": value,
                        "before": before.get(value, 0.0),
                        "after": after.get(value, 0.0),
                        "shift": shift,
                    }
                )
    rows.sort(key=lambda r: (-abs(r["shift"]), r["dimension"], r["value"]))
    return rows[:top] if top else rows
