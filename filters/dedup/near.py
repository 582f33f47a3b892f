"""Near-duplicate links between distinct runs of the same group.

Two runs are linked when their combined cosine distance is at most ``distance_threshold`` and
their trajectory distance at most ``max_trajectory_distance``. This module finds the connected
components of those links (single linkage, as in MinHash-LSH dedup pipelines); ``linkage.py``
then splits them by complete linkage unless configured otherwise. Only pairs inside one group are
ever compared, and similarities are computed a row chunk at a time, so memory is
``chunk x chunk`` (or ``chunk x group``), never the full pairwise matrix.

* Small groups are packed together (``PACK_ROWS``) and compared in one sparse product with
  cross-group pairs masked out; this keeps scipy's per-call overhead off the many tiny groups
  real traffic has.
* Groups larger than ``large_block_size`` are first partitioned SemDeDup-style: a sparse random
  projection to a few dozen dimensions, then ``MiniBatchKMeans`` into about
  ``n / partition_size`` partitions, and links are searched within a partition; then one leader
  per component is compared across partitions, which re-joins most clusters k-means split. That
  keeps the work near-linear; the price is that a few split pairs may stay unlinked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import threadpool_limits

from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.features import RunFeatures

if TYPE_CHECKING:  # scipy / scikit-learn are imported where used: see features.py
    import scipy.sparse as sp

#: Small groups are packed into one product of at most this many rows. The product also
#: computes (and discards) cross-group pairs, so its cost grows with the pack size; a few hundred
#: rows amortise scipy's per-call overhead without much waste.
PACK_ROWS = 256

#: Floating-point slack on thresholds (float32 dot products of identical rows are not exactly 1).
EPS = 1e-5


@dataclass(slots=True)
class Links:
    """Linked pairs (row indices into the features) and how large groups were partitioned."""

    sources: list[np.ndarray]
    targets: list[np.ndarray]
    partitioned_groups: int = 0
    partitions: int = 0

    def add(self, rows: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
        self.sources.append(rows[i])
        self.targets.append(rows[j])

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        empty = np.zeros(0, dtype=np.int64)
        return (
            np.concatenate(self.sources) if self.sources else empty,
            np.concatenate(self.targets) if self.targets else empty,
        )


def compact(matrix: sp.csr_matrix) -> sp.csr_matrix:
    """The same rows over only the columns they use.

    Hashed feature spaces are wide (hundreds of thousands of columns); transposing a small
    slice would still allocate per column, so the used columns are renumbered first.
    """
    import scipy.sparse as sp

    cols, inverse = np.unique(matrix.indices, return_inverse=True)
    return sp.csr_matrix(
        (matrix.data, inverse.astype(np.int32), matrix.indptr), shape=(matrix.shape[0], len(cols))
    )


def _roots(n: int, roots: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Component root (smallest member) of each node after adding edges ``i - j``.

    Folding each chunk's edges into per-node roots right away keeps memory at O(n) however
    many pairs are similar (a big group of near-identical runs has ~n^2/2 of them).
    """
    nodes = np.arange(n)
    src = np.concatenate([nodes, i])
    dst = np.concatenate([roots, j])
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    graph = sp.coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    smallest = np.full(labels.max() + 1, n, dtype=np.int64)
    np.minimum.at(smallest, labels, nodes)
    return smallest[labels]


def _pairs(
    features: RunFeatures, rows: np.ndarray, cfg: DedupConfig, same: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Star edges (k, root of k) over positions into ``rows`` that connect its components.

    ``same[k]`` is the group of ``rows[k]`` when several small groups are packed together.
    Each chunk of rows is compared only with itself and later rows (the upper triangle).
    """
    combined = compact(features.combined[rows])
    gate = cfg.max_trajectory_distance > 0
    traj = compact(features.trajectory[rows]) if gate else None
    min_sim = 1.0 - cfg.distance_threshold - EPS
    min_traj = 1.0 - cfg.max_trajectory_distance - EPS
    n = combined.shape[0]
    roots = np.arange(n)
    for start in range(0, n, cfg.pairwise_chunk_rows):
        stop = min(start + cfg.pairwise_chunk_rows, n)
        ok = (combined[start:stop] @ combined[start:].T).toarray() >= min_sim
        if traj is not None:
            ok &= (traj[start:stop] @ traj[start:].T).toarray() >= min_traj
        if same is not None:
            ok &= same[start:stop, None] == same[None, start:]
        i, j = np.nonzero(ok)
        keep = i < j
        if keep.any():
            roots = _roots(n, roots, i[keep] + start, j[keep] + start)
    linked = np.flatnonzero(roots != np.arange(n))
    return linked, roots[linked]


def partitions(combined: sp.csr_matrix, cfg: DedupConfig, seed: int) -> np.ndarray:
    """Partition label for each row of a large group (deterministic for a given input)."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.random_projection import SparseRandomProjection

    n = combined.shape[0]
    k = max(2, math.ceil(n / cfg.partition_size))
    projector = SparseRandomProjection(
        n_components=cfg.projection_dims, dense_output=True, random_state=seed
    )
    dense = projector.fit_transform(compact(combined)).astype(np.float64)
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    dense /= np.where(norms == 0, 1.0, norms)
    model = MiniBatchKMeans(n_clusters=k, n_init=3, batch_size=2048, random_state=seed)
    # one thread: these fits are small, and OpenMP threads spinning on a busy machine (the
    # flow's shard workers, other jobs) made them up to 10x slower in the benchmark
    with threadpool_limits(limits=1):
        return model.fit_predict(dense)


def _large_group(
    features: RunFeatures, rows: np.ndarray, cfg: DedupConfig, out: Links, level: int = 0
) -> None:
    """Links within partitions, then among the partitions' component leaders.

    A pair that k-means put into two partitions is not compared in the first pass; comparing
    one leader per component afterwards (all of them when few enough, else in a second,
    differently seeded partitioning) re-joins most such split clusters at little cost.
    """
    parts = partitions(features.combined[rows], cfg, cfg.random_state + level)
    labels = np.unique(parts)
    out.partitioned_groups += level == 0
    out.partitions += len(labels)
    roots = rows.copy()
    for part in labels:
        members = np.flatnonzero(parts == part)
        sub = rows[members]
        i, j = _pairs(features, sub, cfg)
        out.add(sub, i, j)
        local = sub.copy()
        local[i] = sub[j]
        roots[members] = local
    leaders = np.unique(roots)
    if len(leaders) < 2:
        return
    if len(leaders) <= cfg.large_block_size:
        i, j = _pairs(features, leaders, cfg)
        out.add(leaders, i, j)
    elif level == 0:
        _large_group(features, leaders, cfg, out, level + 1)


def near_duplicate_links(
    features: RunFeatures, bounds: list[tuple[int, int]], cfg: DedupConfig
) -> Links:
    """All near-duplicate links among feature rows, only within each ``[start, stop)`` group."""
    out = Links([], [])
    batch: list[tuple[int, int]] = []
    batch_rows = 0

    def flush() -> None:
        nonlocal batch, batch_rows
        if batch:
            rows = np.concatenate([np.arange(s, e) for s, e in batch])
            same = np.repeat(np.arange(len(batch)), [e - s for s, e in batch])
            i, j = _pairs(features, rows, cfg, same)
            out.add(rows, i, j)
        batch, batch_rows = [], 0

    for start, stop in bounds:
        size = stop - start
        if size < 2:
            continue
        if size > cfg.large_block_size:
            _large_group(features, np.arange(start, stop), cfg, out)
        elif size > PACK_ROWS:
            rows = np.arange(start, stop)
            i, j = _pairs(features, rows, cfg)
            out.add(rows, i, j)
        else:
            if batch_rows + size > PACK_ROWS:
                flush()
            batch.append((start, stop))
            batch_rows += size
    flush()
    return out


def distances_to(features: RunFeatures, rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Combined cosine distance between each ``rows[i]`` and ``targets[i]``."""
    a = features.combined[rows]
    b = features.combined[targets]
    sims = np.asarray(a.multiply(b).sum(axis=1)).ravel()
    return np.clip(1.0 - sims, 0.0, 1.0)
