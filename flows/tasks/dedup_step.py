"""The select step's global dedup of a run built from sources, bucket by bucket.

Wiring only: the bucket plan and the merges are ``filters/dedup/buckets.py``, the clustering
``filters/dedup/cluster.py``. The shards' signature files are read twice: a streaming scan of a
few small columns of every candidate (the plan), then one pass that writes each bucket's rows to
a scratch file of its own (one shard file in memory at a time). Each bucket is then read and
clustered alone: memory holds one bucket's signatures and features, not the night's. The
machine's other core is idle during this step, so a night of a few buckets up to
``TWO_PROCESSES_MAX_CANDIDATES`` shares them with one helper process (datasets/
front_and_back.py): the same results in the same order (tests/flows/test_dedup_step.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from golden_distill.datasets.front_and_back import front_and_back, helper_would_help
from golden_distill.filters.dedup.borderline import borderline_members, mixed_pairs
from golden_distill.filters.dedup.bucket_clusters import BucketClusters, cluster_bucket
from golden_distill.filters.dedup.buckets import (
    PLAN_COLUMNS,
    BucketPlan,
    merge_largest,
    merge_stats,
    plan_buckets,
)
from golden_distill.filters.dedup.cluster import Clustering
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.report import LargestCluster
from golden_distill.filters.dedup.signature import SIGNATURE_SCHEMA
from golden_distill.flows.memory import freeze_loaded_objects, release_memory
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.work_folder import WorkFolder

#: Candidates up to which the buckets are clustered in two processes (this one and a helper).
#: The helper holds ~0.28 GB (polars, scikit-learn, one bucket's features), and this process
#: grows with the night's candidates: at 2M sessions (1.26M candidates) the select worker is the
#: process tree's peak, under issue 15's 2 GB only without a helper; a million-session night
#: (631k candidates) gains ~13 s of the step's ~45 with the helper.
TWO_PROCESSES_MAX_CANDIDATES = 800_000
#: Buckets from which a helper is worth starting (~2 s to spawn and import; a bucket ~2 s).
TWO_PROCESSES_MIN_BUCKETS = 3


@dataclass
class DedupOutcome:
    """The cluster table (None: dedup off), its report counts and every candidate's recording
    time (for the clusters' last-seen time)."""

    clusters: pl.DataFrame | None
    stats: dict[str, Any]
    seen: pl.DataFrame  # case_id, recorded_at


@contextmanager
def _bucket_files(
    files: list[str], plan: BucketPlan, scores: pl.DataFrame, work: WorkFolder
) -> Iterator[list[Path]]:
    """Each non-empty bucket's signature rows in a file of its own, written in one pass over
    the shards' signature files (one shard file in memory at a time), in a private scratch
    folder of the flow's machine that is removed at the end (the rows hold normalised request
    text: pipeline-internal). A row's ``value_score`` is the night's (``scores``), not its
    shard's: a bucket file is all its clustering reads (``cluster_bucket``)."""
    scratch = Path(tempfile.mkdtemp(prefix="dedup-buckets-", dir=work.local_state()))  # 0700
    writers: dict[int, pq.ParquetWriter] = {}
    try:
        for file in files:
            rows = pl.read_parquet(file).join(plan.assignment, on=["case_id", "exact_hash"])
            rows = rows.cast({c: t for c, t in SIGNATURE_SCHEMA.items() if c in rows.columns})
            rows = rows.drop("value_score").join(scores, on="case_id", how="left")
            for (bucket,), part in rows.partition_by("bucket", as_dict=True).items():
                table = part.drop("bucket").to_arrow()
                if bucket not in writers:
                    target = scratch / f"{bucket:05d}.parquet"
                    writers[bucket] = pq.ParquetWriter(target, table.schema)
                writers[bucket].write_table(table.cast(writers[bucket].schema))
            del rows
        written = sorted(writers)
        for bucket in written:
            writers.pop(bucket).close()
        yield [scratch / f"{bucket:05d}.parquet" for bucket in written]
    finally:
        for writer in writers.values():
            writer.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _collect(frame: pl.LazyFrame) -> pl.DataFrame:
    return frame.collect(engine="streaming")


def deduplicate_candidates(
    results: list[ShardResult],
    candidates: pl.Series,
    decisions: pl.DataFrame,
    cfg: DedupConfig,
    work: WorkFolder,
) -> DedupOutcome:
    """Cluster the ``candidates`` bucket by bucket; ``decisions`` give the value scores that
    rank cluster members (the global pass's, not the shard's)."""
    wanted = pl.DataFrame({"case_id": candidates.unique()}).lazy()
    scores = (
        decisions.filter(pl.col("candidate"))
        .unique("case_id", keep="first", maintain_order=True)
        .select("case_id", "value_score")
    )
    with work.local_copies([r.signatures_path for r in results]) as files:
        signatures = pl.concat([pl.scan_parquet(f) for f in files], how="vertical_relaxed")
        keys = (
            _collect(signatures.select(PLAN_COLUMNS).join(wanted, on="case_id", how="semi"))
            .drop("value_score")
            .join(scores, on="case_id", how="left")
        )
        seen = keys.select("case_id", "recorded_at")
        if not cfg.enabled or keys.height == 0:
            off = {"removed_by_dedup": 0, "cluster_sizes": {}}
            return DedupOutcome(None, off, seen)
        plan = plan_buckets(keys, cfg)
        mixed = mixed_pairs(keys)  # across buckets: the plan columns hold every candidate
        night = keys.height
        del keys, wanted
        tables, parts, largest = [], [], []
        # the collection after each bucket then walks only that bucket's objects, not every
        # module of the select worker (~0.16 s each: 2.7 s of a 1M-session select step)
        freeze_loaded_objects("dedup step")
        with _bucket_files(files, plan, scores, work) as buckets:
            plan = replace(plan, assignment=plan.assignment.clear())  # dealt: counts only
            del scores
            for _, done in clustered(buckets, cfg, two_processes(night, buckets)):
                tables.append(done.table)
                parts.append(done.stats)
                largest.append(done.largest)
                del done
                release_memory()  # the features' heap (numpy, scipy: not polars' allocator)
    table = pl.concat(tables, rechunk=False).sort(["cluster_id", "rank"])
    tables.clear()  # the sorted copy is the only one now
    merged = Clustering(table, merge_stats(parts, plan))
    stats = dedup_stats(merged, merge_largest(largest, cfg.report_largest), cfg, mixed)
    release_memory()  # the features' freed heap (numpy, scipy) before the quotas run
    return DedupOutcome(table, stats, seen)


def two_processes(candidates: int, buckets: list[Path]) -> bool:
    """Whether to cluster ``buckets`` in this process and a helper: enough buckets to gain,
    few enough candidates to stay under the run's memory bound, and a core and the right to
    start a child process."""
    return (
        len(buckets) >= TWO_PROCESSES_MIN_BUCKETS
        and candidates <= TWO_PROCESSES_MAX_CANDIDATES
        and helper_would_help()
    )


def clustered(
    buckets: list[Path], cfg: DedupConfig, two: bool
) -> Iterable[tuple[int, BucketClusters]]:
    """Every bucket clustered, in bucket order: here, or shared with one helper process."""
    if two:
        return front_and_back(buckets, cluster_bucket, cfg)
    return ((index, cluster_bucket(bucket, cfg)) for index, bucket in enumerate(buckets))


#: Mixed pairs listed in the report and the manifest (all of them are counted).
MIXED_LISTED = 100


def dedup_stats(
    clustering: Clustering,
    largest: list[LargestCluster],
    cfg: DedupConfig,
    mixed: pl.DataFrame,
) -> dict[str, Any]:
    """The dedup counts of the report and the manifest; ``mixed``: the candidates' mixed pairs
    (``borderline.mixed_pairs``), same content but different work, never merged."""
    sizes = (
        clustering.table.filter(pl.col("role") == "representative")
        .get_column("cluster_size")
        .value_counts()
    )
    return {
        "cluster_sizes": {
            str(row["cluster_size"]): int(row["count"])
            for row in sizes.sort("cluster_size").iter_rows(named=True)
        },
        "dedup": {
            "clusters": clustering.stats.clusters,
            "singletons": clustering.stats.singletons,
            "merged_exact": clustering.stats.merged_exact,
            "merged_near": clustering.stats.merged_near,
        },
        "largest_clusters": [asdict(c) for c in largest],
        "borderline": borderline_members(clustering.table, cfg).head(100).to_dicts(),
        "mixed_pairs": mixed.head(MIXED_LISTED).to_dicts(),
        "mixed_pairs_total": mixed.height,
    }
