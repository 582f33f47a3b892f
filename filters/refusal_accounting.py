"""What redaction's refusals did to the selection: replaced, or a cluster lost. Counts only.

The selection picks one representative per cluster (``dedup.keep_per_cluster``) and the quotas
run over them; redaction then refuses a few (fail closed). A refused case's cluster chooses
again (the next member is redacted in a further round), and the quotas apply again. When no
member of a cluster can be published (every one refused, or the rounds ran out, or the quotas
cut the replacement) the cluster is *lost*. The counts below add up exactly, per cluster slot:

    selected - lost + admitted = published

``admitted`` counts cases of clusters the first choice did not publish that the quotas took in
after the refusals (a share freed by a lost case). The report, the manifest (``stats``) and
`golden run`'s console all show these numbers, so a selection that shrank is never reported as
"replaced".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl


def _slots(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    """Cases per cluster (a case without a cluster, dedup off, is a cluster of its own)."""
    key = pl.coalesce(pl.col("cluster_id"), pl.col("case_id"))
    return frame.group_by(key.alias("cluster")).agg(pl.len().cast(pl.Int64).alias(name))


def refusal_accounting(
    first: pl.DataFrame, published: pl.DataFrame, refused: Iterable[str]
) -> dict[str, Any]:
    """``first``: case_id, cluster_id of the representatives chosen before redaction;
    ``published``: the same columns for the new cases published; ``refused``: every case
    redaction refused (replacements included). The counts described in the module docstring,
    and ``clusters_lost``: first-choice clusters with no case published."""
    refused_ids = sorted(set(refused))
    first = first.select("case_id", "cluster_id")
    published = published.select("case_id", "cluster_id")
    refused_first = first.filter(pl.col("case_id").is_in(refused_ids))
    slots = (
        _slots(first, "s")
        .join(_slots(published, "p"), on="cluster", how="full", coalesce=True)
        .join(_slots(refused_first, "r"), on="cluster", how="left")
        .with_columns(pl.col("s", "p", "r").fill_null(0))
        .with_columns(
            lost=(pl.col("s") - pl.col("p")).clip(lower_bound=0),
            admitted=(pl.col("p") - pl.col("s")).clip(lower_bound=0),
        )
        # a refused first-choice case whose cluster still fills its slot was replaced
        .with_columns(replaced=pl.min_horizontal("r", pl.col("s") - pl.col("lost")))
    )
    total = slots.select(pl.col("s", "p", "lost", "admitted", "replaced").sum())
    row = total.row(0, named=True) if slots.height else dict.fromkeys(total.columns, 0)
    lost_clusters = slots.filter((pl.col("s") > 0) & (pl.col("p") == 0)).height
    return {
        "selected": int(row["s"] or 0),
        "refused": len(refused_ids),
        "refused_selected": refused_first.height,
        "replaced": int(row["replaced"] or 0),
        "lost": int(row["lost"] or 0),
        "clusters_lost": lost_clusters,
        "admitted": int(row["admitted"] or 0),
        "published": int(row["p"] or 0),
    }


def describe(counts: dict[str, Any]) -> str:
    """One line for the console and logs: ``published N of S selected; ...``."""
    line = f"{counts['published']:,} of {counts['selected']:,} selected cases published"
    if counts.get("refused"):
        line += (
            f"; redaction refused {counts['refused']:,}: {counts['replaced']:,} replaced by "
            f"the next member of their cluster, {counts['clusters_lost']:,} cluster(s) lost"
        )
    if counts.get("admitted"):
        line += f"; {counts['admitted']:,} admitted by the quotas after the refusals"
    return line
