"""The review queue: the published cases of one version, why each deserves a look, and the
filters a reviewer narrows it with (funnel, split, trust, cluster, task, decision).

Built only from published (redacted) versions: the version under review and its parent (for
"new" and "changed"), plus the set's review log for each case's latest decision. The review
sheet (`golden review export`) and the review page (`golden review serve`) both list this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import polars as pl

from golden_distill.filters.drift import case_changes

#: Why a case is worth a look: not in the parent version (every case of a first version), its
#: content changed since the parent, or no oracle confirmed its expected outcome.
NEW, CHANGED, UNCONFIRMED = "new", "changed", "unconfirmed"
#: Decision filter values besides the decisions themselves.
UNDECIDED, DECIDED = "undecided", "decided"


def latest_decisions(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The latest log entry per case id: the one the next run applies (the same rule as
    ``ReviewDecisions.from_entries``: ordered by ``at``, a later line wins a tie)."""
    latest: dict[str, dict[str, Any]] = {}
    for entry in sorted(entries, key=lambda e: str(e.get("at") or "")):
        latest[entry["case_id"]] = entry
    return latest


def task_expr(frame: pl.DataFrame, pattern: str | None) -> pl.Expr:
    """The task a case belongs to: the published ``task_id`` column (schema 1.2: the source's
    task id, pseudonymised consistently), else as dedup reads it (``filters/dedup/signature.py``):
    the intent name, else ``pattern``'s first group over the trace id, then the source record
    id (versions published before the column)."""
    found = [pl.col("task_id").cast(pl.String)] if "task_id" in frame.columns else []
    found.append(pl.col("intent").struct.field("name").cast(pl.String))
    if pattern:
        found.append(pl.col("trace_id").cast(pl.String).str.extract(pattern, 1))
        record = pl.col("source").struct.field("source_record_id").cast(pl.String)
        found.append(record.str.extract(pattern, 1))
    return pl.coalesce(*found)


def why_review(cases: pl.DataFrame, previous: pl.DataFrame | None) -> pl.Series:
    """Per case, ``new``/``changed``/``unconfirmed`` joined by ``+`` ("" when none applies).
    ``previous`` None: a first version, whose every case is new."""
    if previous is None:
        known: set[str] = set()
        changed: set[str] = set()
    else:
        known = set(previous.get_column("case_id").to_list())
        changed = {c["case_id"] for c in case_changes(previous, cases)}
    trust = cases.get_column("trust") if "trust" in cases.columns else None
    out = []
    for i, case_id in enumerate(cases.get_column("case_id").to_list()):
        why = []
        if case_id not in known:
            why.append(NEW)
        if case_id in changed:
            why.append(CHANGED)
        if trust is None or (trust[i] or UNCONFIRMED) == UNCONFIRMED:
            why.append(UNCONFIRMED)
        out.append("+".join(why))
    return pl.Series("why_review", out, dtype=pl.String)


def build_queue(
    cases: pl.DataFrame,
    previous: pl.DataFrame | None,
    decisions: Mapping[str, dict[str, Any]],
    task_pattern: str | None = None,
) -> pl.DataFrame:
    """One row per published case, in case id order: ``case_id, why_review, funnels, split,
    trust, cluster_id, cluster_size, task, value_score, reward, final_state, request,
    decision, reviewer`` (the latest logged decision, null when none)."""
    ordered = cases.sort("case_id")
    outcome = pl.col("outcome").struct
    queue = ordered.select(
        "case_id",
        "funnels",
        pl.col("split").cast(pl.String),
        pl.col("trust").cast(pl.String),
        "cluster_id",
        "cluster_size",
        task_expr(ordered, task_pattern).alias("task"),
        "value_score",
        outcome.field("reward").alias("reward"),
        outcome.field("final_state").alias("final_state"),
        pl.col("user_input").alias("request"),
    ).with_columns(why_review(ordered, previous))
    ids = queue.get_column("case_id").to_list()
    return queue.with_columns(
        pl.Series("decision", [decisions.get(i, {}).get("decision") for i in ids], pl.String),
        pl.Series("reviewer", [decisions.get(i, {}).get("reviewer") for i in ids], pl.String),
    )


@dataclass(frozen=True, slots=True)
class QueueFilter:
    """What a reviewer narrowed the queue to; None: any. ``decision``: ``undecided``,
    ``decided`` or one decision (confirm, reject, correct); ``why``: new, changed or
    unconfirmed."""

    funnel: str | None = None
    split: str | None = None
    trust: str | None = None
    cluster: str | None = None
    task: str | None = None
    decision: str | None = None
    why: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> QueueFilter:
        """From query parameters; empty values mean any, unknown names are ignored."""
        names = [f.name for f in fields(cls)]
        return cls(**{n: (params.get(n) or "").strip() or None for n in names})

    def params(self) -> dict[str, str]:
        """The set filters, as query parameters (round-trips ``from_params``)."""
        return {k: v for k, v in asdict(self).items() if v}


def select(queue: pl.DataFrame, wanted: QueueFilter) -> pl.DataFrame:
    """The rows of ``queue`` that pass ``wanted``, in queue order."""
    conditions: list[pl.Expr] = []
    if wanted.funnel:
        conditions.append(pl.col("funnels").list.contains(wanted.funnel))
    for name in ("split", "trust", "task"):
        value = getattr(wanted, name)
        if value:
            conditions.append(pl.col(name) == value)
    if wanted.cluster:
        conditions.append(pl.col("cluster_id") == wanted.cluster)
    if wanted.why:
        conditions.append(pl.col("why_review").str.split("+").list.contains(wanted.why))
    if wanted.decision == UNDECIDED:
        conditions.append(pl.col("decision").is_null())
    elif wanted.decision == DECIDED:
        conditions.append(pl.col("decision").is_not_null())
    elif wanted.decision:
        conditions.append(pl.col("decision") == wanted.decision)
    if not conditions:
        return queue
    return queue.filter(pl.all_horizontal(conditions).fill_null(False))


def facets(queue: pl.DataFrame) -> dict[str, list[str]]:
    """The values each select-style filter can take in ``queue`` (sorted, nulls left out)."""

    def values(expr: pl.Expr) -> list[str]:
        return sorted(v for v in queue.select(expr.drop_nulls().unique()).to_series() if v)

    return {
        "funnel": values(pl.col("funnels").explode()),
        "split": values(pl.col("split")),
        "trust": values(pl.col("trust")),
        "task": values(pl.col("task")),
        "why": [NEW, CHANGED, UNCONFIRMED],
        "decision": [UNDECIDED, DECIDED, "confirm", "reject", "correct"],
    }


def neighbours(queue: pl.DataFrame, case_id: str) -> tuple[str | None, str | None, int]:
    """(previous, next) case ids around ``case_id`` in ``queue`` and its 1-based position
    (0 when the case is not in it: then next is the first case)."""
    ids = queue.get_column("case_id").to_list()
    if case_id not in ids:
        return None, (ids[0] if ids else None), 0
    at = ids.index(case_id)
    return (ids[at - 1] if at else None), (ids[at + 1] if at + 1 < len(ids) else None), at + 1
