"""The clusters file tells the truth about the version it ships in.

Dedup ranks each cluster and names a ``representative``; redaction may refuse that case later
(the flow then publishes the next member, or none when every member was refused). The table the
pipeline hands over can still carry the first choice, so before ``clusters.parquet`` is written
its marks are re-derived from the cases actually published:

* ``role``: ``representative`` for a case published in this version, else ``member``;
* ``published``: this case is in the version's cases;
* ``cluster_published``: some member of the cluster is; false means the cluster has no
  representative in this version (its cases were refused).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def mark_published(clusters: pa.Table, published_ids: pa.Array | pa.ChunkedArray) -> pa.Table:
    """``clusters`` with ``role``, ``published`` and ``cluster_published`` set from the cases
    published (unchanged when it has no ``case_id`` column)."""
    names = clusters.column_names
    if "case_id" not in names:
        return clusters
    published = _member_of(clusters.column("case_id"), published_ids)
    table = _set(clusters, "role", pc.if_else(published, "representative", "member"))
    table = _set(table, "published", published)
    if "cluster_id" in names:
        hit = pc.unique(pc.filter(clusters.column("cluster_id"), published))
        table = _set(table, "cluster_published", _member_of(clusters.column("cluster_id"), hit))
    return table


def _member_of(values: pa.ChunkedArray, pool: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    flat = pool.combine_chunks() if isinstance(pool, pa.ChunkedArray) else pool
    return pc.fill_null(pc.is_in(values, value_set=flat), False)


def _set(table: pa.Table, name: str, values: pa.Array | pa.ChunkedArray) -> pa.Table:
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, values)
    return table.append_column(name, values)
