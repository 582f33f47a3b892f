"""Every case's final decision, as one small table: the version's ``decisions.parquet``.

The selection's statuses (``filters/selection.py``) are decided before redaction and review
change them; this puts the last word of each step together, per case id the run read (plus
the cases an incremental run carried or let go): published, or why not (the codes of
``datasets/store/decisions.py``), its funnels and score, its cluster, and for a case not
published the member of its cluster published in its place. Ids, names, numbers and codes
only: nothing of a record's content, so the table may be published. Pure functions, no I/O;
`golden preview --case` explains a case with the same words (``explain``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

PUBLISHED = "published"
SELECTED = "selected"
#: Columns of the table (``datasets/store/decisions.DECISIONS_SCHEMA``).
COLUMNS = (
    "case_id", "status", "funnels", "value_score", "cluster_id", "replaced_by", "held_from",
)  # fmt: skip
_SCHEMA = {
    "case_id": pl.String,
    "status": pl.String,
    "funnels": pl.List(pl.String),
    "value_score": pl.Float64,
    "cluster_id": pl.String,
    "replaced_by": pl.String,
    "held_from": pl.String,
}
#: The split the confirmation gate holds an unconfirmed case out of (``filters/splits.py``).
HELD_FROM = "regression"


def _ids(values: Iterable[str]) -> pl.Series:
    return pl.Series("case_id", sorted(set(values)), dtype=pl.String)


def decision_table(
    read: pl.LazyFrame,
    *,
    final: pl.DataFrame | None = None,
    membership: pl.DataFrame | None = None,
    published: Iterable[str] = (),
    refused: dict[str, str] | None = None,
    rejected: Iterable[str] = (),
    carried: pl.DataFrame | None = None,
    left: pl.DataFrame | None = None,
    held: Iterable[str] = (),
) -> pl.DataFrame:
    """The decisions table (``COLUMNS``, one row per case id).

    ``read``: every row the run read (case_id, status, funnels, value_score; a case id read
    twice: its first row); ``final``: case_id, status of the candidates after the last choice
    (quotas, dedup, refusals, review), overriding ``read``; ``membership``: case_id,
    cluster_id of every clustered case; ``published``: the ids in the version; ``refused``:
    case_id -> redaction's reason code; ``rejected``: left out in review; ``carried``:
    case_id, funnels, value_score of the cases an incremental run took from its parent
    (published or let go); ``left``: case_id, reason of the carried cases let go;
    ``held``: published cases the confirmation gate holds out of regression (``held_from``:
    the split they belong in once confirmed)."""
    rows = (
        read.select("case_id", "status", "funnels", "value_score")
        .unique("case_id", keep="first", maintain_order=True)
        .collect()
    )
    if final is not None and final.height:
        last = final.select("case_id", _final=pl.col("status")).unique("case_id", keep="first")
        rows = rows.join(last, on="case_id", how="left").with_columns(
            status=pl.coalesce("_final", "status")
        )
        rows = rows.drop("_final")
    if carried is not None and carried.height:
        extra = carried.select(
            "case_id",
            status=pl.lit(PUBLISHED),
            funnels=pl.col("funnels").cast(pl.List(pl.String)),
            value_score=pl.col("value_score").cast(pl.Float64),
        ).join(rows.select("case_id"), on="case_id", how="anti")
        rows = pl.concat([rows, extra], how="vertical_relaxed")
    status = pl.col("status")
    if refused:
        codes = pl.col("case_id").replace_strict(refused, default=None, return_dtype=pl.String)
        status = (
            pl.when(codes.is_not_null()).then(pl.format("redaction:{}", codes)).otherwise(status)
        )
    status = (
        pl.when(pl.col("case_id").is_in(_ids(rejected).implode()))
        .then(pl.lit("review:rejected"))
        .otherwise(status)
    )
    if left is not None and left.height:
        reasons = dict(zip(left["case_id"].to_list(), left["reason"].to_list(), strict=True))
        gone = pl.col("case_id").replace_strict(reasons, default=None, return_dtype=pl.String)
        status = pl.when(gone.is_not_null()).then(pl.format("left:{}", gone)).otherwise(status)
    rows = rows.with_columns(status=status)
    is_published = pl.col("case_id").is_in(_ids(published).implode())
    rows = rows.with_columns(
        status=pl.when(is_published)
        .then(pl.lit(PUBLISHED))
        .when(pl.col("status") == SELECTED)  # chosen, yet not in the version: say so
        .then(pl.lit("selected:not_published"))
        .otherwise(pl.col("status"))
    )
    if membership is not None and membership.height:
        clusters = membership.select("case_id", "cluster_id").unique("case_id", keep="first")
        rows = rows.join(clusters, on="case_id", how="left")
        shown = (
            rows.filter(pl.col("status") == PUBLISHED)
            .drop_nulls("cluster_id")
            .group_by("cluster_id")
            .agg(replaced_by=pl.col("case_id").min())
        )
        rows = rows.join(shown, on="cluster_id", how="left").with_columns(
            replaced_by=pl.when(pl.col("status") != PUBLISHED).then(pl.col("replaced_by"))
        )
    else:
        rows = rows.with_columns(
            cluster_id=pl.lit(None, dtype=pl.String), replaced_by=pl.lit(None, dtype=pl.String)
        )
    rows = rows.with_columns(
        held_from=pl.when(pl.col("case_id").is_in(_ids(held).implode())).then(pl.lit(HELD_FROM))
    )
    return rows.select([pl.col(c).cast(t) for c, t in _SCHEMA.items()]).sort("case_id")


#: What each status family means, in a reviewer's words.
_MEANINGS = (
    (PUBLISHED, "published in this version"),
    ("no_funnel", "in no select funnel: no rule found it worth replaying"),
    ("gate:", "stopped by a gate ({detail})"),
    ("dedup:duplicate_id", "the same record read twice: its first reading stands"),
    ("dedup:", "a {detail} duplicate of another member of its cluster"),
    ("quota:", "cut by the quotas ({detail})"),
    ("redaction:", "redaction refused it ({detail}): it could not be scrubbed and verified"),
    ("review:", "rejected in review"),
    ("erasure:", "its subject was erased: publishing leaves it out"),
    ("left:", "left the set ({detail}): it had been carried from the parent version"),
    ("selected:", "chosen, but not in the version"),
    (SELECTED, "selected"),
)


def explain(row: dict[str, Any], chosen: str = "published") -> str:
    """One line for a decision row: what its status means, its funnels and cluster, and who
    was ``chosen`` (published; selected, in a preview) in its place."""
    status = str(row.get("status") or "")
    words = status
    for prefix, meaning in _MEANINGS:
        if status == prefix or (prefix.endswith(":") and status.startswith(prefix)):
            detail = status.removeprefix(prefix) if prefix.endswith(":") else ""
            words = meaning.format(detail=detail or status)
            break
    parts = [f"{status}: {words}"]
    funnels = [f for f in row.get("funnels") or [] if f]
    if funnels:
        parts.append(f"funnels {', '.join(funnels)}")
    if row.get("value_score") is not None:
        parts.append(f"value score {float(row['value_score']):g}")
    if row.get("cluster_id"):
        parts.append(f"cluster {row['cluster_id']}")
    if row.get("held_from"):
        parts.append(f"held out of {row['held_from']} until a person confirms it")
    if row.get("replaced_by"):
        parts.append(f"{chosen} in its place: {row['replaced_by']}")
    return "; ".join(parts)
