"""One dedup bucket clustered: everything the select step keeps of it.

The select step clusters a night's candidates bucket by bucket (``buckets.plan_buckets``); a
bucket's result depends on its own rows only, so buckets can be clustered in any process
(flows/tasks/dedup_step.py shares them between its own process and a helper). This module imports
polars and the clustering only, not Prefect: a helper process that unpickles ``cluster_bucket``
carries no more than that.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from golden_distill.filters.dedup.cluster import ClusterStats, cluster
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.report import LargestCluster, largest_clusters


@dataclass
class BucketClusters:
    """A bucket's cluster table (``CLUSTER_SCHEMA``), its stats and its largest clusters."""

    table: pl.DataFrame
    stats: ClusterStats
    largest: list[LargestCluster]


def cluster_bucket(path: Path, cfg: DedupConfig) -> BucketClusters:
    """Cluster the signature rows of one bucket file (with the value scores that rank cluster
    members, written into the file with its rows)."""
    rows = pl.read_parquet(path)
    clustering = cluster(rows, cfg)
    return BucketClusters(
        table=clustering.table,
        stats=clustering.stats,
        largest=largest_clusters(clustering.table, rows, cfg.report_largest),
    )
