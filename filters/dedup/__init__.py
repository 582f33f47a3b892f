"""Deduplication: exact duplicates by normalised content, near duplicates by clustering.

Two-phase API (the flow runs phase 1 per shard and phase 2 once, globally):

* ``signatures(df, cfg) -> pl.DataFrame``: a compact per-case signature (SIGNATURE_SCHEMA);
* ``cluster(signatures, cfg) -> Clustering``: the cluster table (CLUSTER_SCHEMA) and stats;
* ``choose_representatives(table, excluded_case_ids, k)``: the kept cases, re-runnable when a
  representative is quarantined later (the next member of its cluster takes its place).

(Tests chain the three for one frame with ``tests/support/dedup_helpers.deduplicate``.)
"""

from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA, Clustering, ClusterStats, cluster
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.representatives import KEPT_SCHEMA, choose_representatives
from golden_distill.filters.dedup.signature import SIGNATURE_SCHEMA, signatures

__all__ = [
    "CLUSTER_SCHEMA",
    "KEPT_SCHEMA",
    "SIGNATURE_SCHEMA",
    "ClusterStats",
    "Clustering",
    "DedupConfig",
    "choose_representatives",
    "cluster",
    "signatures",
]
