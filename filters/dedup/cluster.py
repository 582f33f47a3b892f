"""Phase 2 of dedup, global: signatures in, the cluster table out.

``cluster(signatures, cfg)`` runs once over the signatures of every shard (see
``signature.signatures``). It collapses exact duplicates, searches near duplicates group by group,
ranks each cluster's members best-first and returns one row per case:

=========================  =================================================================
cluster_id                 ``cl_`` + hash of the cluster's smallest case id (order-independent)
case_id                    the member
exact_hash                 its normalised-form hash (members sharing it are exact duplicates)
role                       ``representative`` (rank 0) or ``member``
merged_by                  ``self`` for the representative, else ``exact`` or ``near``
distance_to_representative combined cosine distance to the rank-0 case (0 for exact)
rank                       0 = best by value_score, distinct tools, earliest, case id
cluster_size               members in the cluster
=========================  =================================================================

The ranked member list is what lets the flow replace a representative that is quarantined later
(``representatives.choose_representatives`` skips excluded ids and takes the next member).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from golden_distill.filters.dedup.blocking import group_bounds, priority_order, units
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.features import run_features
from golden_distill.filters.dedup.linkage import refine
from golden_distill.filters.dedup.near import distances_to, near_duplicate_links

CLUSTER_SCHEMA: dict[str, pl.DataType] = {
    "cluster_id": pl.String(),
    "case_id": pl.String(),
    "exact_hash": pl.String(),
    "role": pl.String(),
    "merged_by": pl.String(),
    "distance_to_representative": pl.Float64(),
    "rank": pl.Int32(),
    "cluster_size": pl.Int32(),
}


@dataclass(slots=True)
class ClusterStats:
    """What the global step saw and did (counts only; no case content)."""

    cases: int = 0
    duplicate_case_ids: int = 0
    distinct_runs: int = 0
    blocks: int = 0
    groups: int = 0
    largest_group: int = 0
    partitioned_groups: int = 0
    partitions: int = 0
    clusters: int = 0
    singletons: int = 0
    merged_exact: int = 0
    merged_near: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class Clustering:
    """The cluster table (``CLUSTER_SCHEMA``) and the stats of the run that made it."""

    table: pl.DataFrame
    stats: ClusterStats


#: Rows (distinct runs) whose features are built at once: whole blocking groups are batched
#: up to this many rows (a larger group is a batch of its own). Groups never link across each
#: other, so the labels are the same for any batch size; only the features (sparse matrices,
#: several KB per run) of one batch are in memory instead of every candidate's.
FEATURE_BATCH_ROWS = 20_000


def _unit_labels(
    unit_table: pl.DataFrame,
    cfg: DedupConfig,
    stats: ClusterStats,
) -> pl.DataFrame:
    """Per unit: the exact hash of its cluster's representative unit and its distance to it."""
    n = unit_table.height
    rep_unit = np.arange(n)
    distance = np.zeros(n, dtype=np.float64)
    bounds = group_bounds(unit_table)
    stats.groups = len(bounds)
    stats.largest_group = max((e - s for s, e in bounds), default=0)
    multi = [(s, e) for s, e in bounds if e - s > 1]
    if cfg.near_duplicates and multi:
        best = unit_table.get_column("best_priority").to_numpy()
        for batch in _group_batches(multi, FEATURE_BATCH_ROWS):
            _link_batch(unit_table, batch, best, cfg, stats, rep_unit, distance)
    hashes = unit_table.get_column("exact_hash")
    return pl.DataFrame(
        {
            "exact_hash": hashes,
            "rep_hash": hashes.gather(rep_unit),
            "distance_to_representative": distance,
        }
    )


def _group_batches(groups: list[tuple[int, int]], batch_rows: int) -> list[list[tuple[int, int]]]:
    """Consecutive whole groups, at most ``batch_rows`` rows per batch (or one larger group)."""
    batches: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    rows = 0
    for start, stop in groups:
        if current and rows + (stop - start) > batch_rows:
            batches.append(current)
            current, rows = [], 0
        current.append((start, stop))
        rows += stop - start
    if current:
        batches.append(current)
    return batches


def _link_batch(
    unit_table: pl.DataFrame,
    multi: list[tuple[int, int]],
    best: np.ndarray,
    cfg: DedupConfig,
    stats: ClusterStats,
    rep_unit: np.ndarray,
    distance: np.ndarray,
) -> None:
    """Near-duplicate clusters of one batch of groups: sets ``rep_unit`` and ``distance`` of
    its rows (positions in ``unit_table``)."""
    t0 = time.perf_counter()
    rows = np.concatenate([np.arange(s, e) for s, e in multi])
    features = run_features(
        unit_table.get_column("trajectory").gather(rows).to_list(),
        unit_table.get_column("text").gather(rows).to_list(),
        unit_table.get_column("argument_shapes").gather(rows).to_list(),
        cfg,
    )
    # group bounds in feature-row coordinates (the multi-unit groups, packed)
    sizes = np.array([e - s for s, e in multi])
    ends = np.cumsum(sizes)
    local_bounds = list(zip((ends - sizes).tolist(), ends.tolist(), strict=True))
    t1 = time.perf_counter()
    links = near_duplicate_links(features, local_bounds, cfg)
    stats.partitioned_groups += links.partitioned_groups
    stats.partitions += links.partitions
    src, dst = links.arrays()
    m = len(rows)
    import scipy.sparse as sp  # lazy: see features.py
    from scipy.sparse.csgraph import connected_components

    graph = sp.coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(m, m))
    _, labels = connected_components(graph, directed=False)
    t2 = time.perf_counter()
    labels = refine(features, labels, cfg)
    t3 = time.perf_counter()
    for name, seconds in (("features", t1 - t0), ("links", t2 - t1), ("linkage", t3 - t2)):
        stats.seconds[name] = round(stats.seconds.get(name, 0.0) + seconds, 3)
    # the representative unit of a component holds its best-priority case
    order = np.lexsort((best[rows], labels))
    first = np.ones(m, dtype=bool)
    first[1:] = labels[order][1:] != labels[order][:-1]
    leader_of_label = np.empty(labels.max() + 1, dtype=np.int64)
    leader_of_label[labels[order][first]] = order[first]
    leaders = leader_of_label[labels]
    rep_unit[rows] = rows[leaders]
    distance[rows] = distances_to(features, np.arange(m), leaders)


def cluster_id_for(case_id: str) -> str:
    """A cluster's id from its smallest member case id: stable for any input order."""
    return "cl_" + hashlib.sha256(case_id.encode()).hexdigest()[:20]


def cluster(signatures: pl.DataFrame, cfg: DedupConfig | None = None) -> Clustering:
    """The cluster table for all ``signatures`` (any order, any number of shards)."""
    cfg = cfg or DedupConfig()
    stats = ClusterStats()
    t0 = time.perf_counter()
    sig = signatures.sort(["case_id", "exact_hash"])
    unique = sig.unique(subset="case_id", keep="first", maintain_order=True)
    stats.duplicate_case_ids = sig.height - unique.height
    stats.cases = unique.height
    if unique.height == 0:
        return Clustering(pl.DataFrame(schema=CLUSTER_SCHEMA), stats)
    ranked = priority_order(unique)
    unit_table = units(ranked, cfg)
    stats.distinct_runs = unit_table.height
    stats.blocks = ranked.get_column("block_key").n_unique()
    t1 = time.perf_counter()
    labels = _unit_labels(unit_table, cfg, stats)
    t2 = time.perf_counter()
    members = (
        ranked.select("case_id", "exact_hash", "priority")
        .join(labels, on="exact_hash", how="left")
        .sort("priority")
        .with_columns(
            pl.col("case_id").min().over("rep_hash").alias("_min_case"),
            pl.int_range(pl.len(), dtype=pl.Int32).over("rep_hash").alias("rank"),
            pl.len().over("rep_hash").cast(pl.Int32).alias("cluster_size"),
        )
    )
    ids = {c: cluster_id_for(c) for c in members.get_column("_min_case").unique().to_list()}
    table = members.with_columns(
        pl.col("_min_case").replace_strict(ids, return_dtype=pl.String).alias("cluster_id"),
        pl.when(pl.col("rank") == 0)
        .then(pl.lit("representative"))
        .otherwise(pl.lit("member"))
        .alias("role"),
        pl.when(pl.col("rank") == 0)
        .then(pl.lit("self"))
        .when(pl.col("exact_hash") == pl.col("rep_hash"))
        .then(pl.lit("exact"))
        .otherwise(pl.lit("near"))
        .alias("merged_by"),
    )
    # the rank-0 case may be an exact duplicate inside the representative unit: distance 0
    table = table.with_columns(
        pl.when(pl.col("merged_by") == "near")
        .then(pl.col("distance_to_representative"))
        .otherwise(pl.lit(0.0))
        .alias("distance_to_representative")
    )
    table = table.select(list(CLUSTER_SCHEMA)).sort(["cluster_id", "rank"])
    counts = table.get_column("merged_by").value_counts()
    by = dict(zip(counts.get_column("merged_by"), counts.get_column("count"), strict=True))
    stats.merged_exact = int(by.get("exact", 0))
    stats.merged_near = int(by.get("near", 0))
    stats.clusters = int(by.get("self", 0))
    stats.singletons = int(table.filter(pl.col("cluster_size") == 1).height)
    stats.seconds.update(
        prepare=round(t1 - t0, 3),
        near_duplicates=round(t2 - t1, 3),
        assemble=round(time.perf_counter() - t2, 3),
    )
    return Clustering(table.cast(CLUSTER_SCHEMA), stats)  # type: ignore[arg-type]
