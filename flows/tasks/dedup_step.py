"""The select step's global dedup of a run built from sources, bucket by bucket.

Wiring only: the bucket plan and the merges are ``filters/dedup/buckets.py``, the clustering
``filters/dedup/cluster.py``. The shards' signature files are read twice: a streaming scan of a
few small columns of every candidate (the plan), then one pass that writes each bucket's rows to
a scratch file of its own (one shard file in memory at a time). Each bucket is then read and
clustered alone: memory holds one bucket's signatures and features, not the night's; the
candidates' tool paths (the coverage gap reads them at publish) go to the work folder bucket by
bucket.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from golden_distill.filters.dedup.borderline import borderline_members
from golden_distill.filters.dedup.buckets import (
    PLAN_COLUMNS,
    BucketPlan,
    merge_largest,
    merge_stats,
    plan_buckets,
)
from golden_distill.filters.dedup.cluster import Clustering, cluster
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.report import LargestCluster, largest_clusters
from golden_distill.filters.dedup.signature import SIGNATURE_SCHEMA
from golden_distill.flows.memory import release_memory
from golden_distill.flows.tasks.frame_ref import FrameRef, FrameWriter
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.work_folder import WorkFolder

PATH_COLUMNS = ["case_id", "path_key", "trajectory"]


@dataclass
class DedupOutcome:
    """The cluster table (None: dedup off), its report counts, every candidate's recording
    time (for the clusters' last-seen time) and tool path (spilled)."""

    clusters: pl.DataFrame | None
    stats: dict[str, Any]
    seen: pl.DataFrame  # case_id, recorded_at
    paths: FrameRef


@contextmanager
def _bucket_files(files: list[str], plan: BucketPlan, work: WorkFolder) -> Iterator[list[Path]]:
    """Each non-empty bucket's signature rows in a file of its own, written in one pass over
    the shards' signature files (one shard file in memory at a time), in a private scratch
    folder of the flow's machine that is removed at the end (the rows hold normalised request
    text: pipeline-internal)."""
    scratch = Path(tempfile.mkdtemp(prefix="dedup-buckets-", dir=work.local_state()))  # 0700
    writers: dict[int, pq.ParquetWriter] = {}
    try:
        for file in files:
            rows = pl.read_parquet(file).join(plan.assignment, on=["case_id", "exact_hash"])
            rows = rows.cast({c: t for c, t in SIGNATURE_SCHEMA.items() if c in rows.columns})
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
    folder: str,
) -> DedupOutcome:
    """Cluster the ``candidates`` bucket by bucket; ``decisions`` give the value scores that
    rank cluster members (the global pass's, not the shard's)."""
    wanted = pl.DataFrame({"case_id": candidates.unique()}).lazy()
    scores = (
        decisions.filter(pl.col("candidate"))
        .unique("case_id", keep="first", maintain_order=True)
        .select("case_id", "value_score")
    )
    paths = FrameWriter(work, f"{folder}/paths.parquet")
    with work.local_copies([r.signatures_path for r in results]) as files:
        signatures = pl.concat([pl.scan_parquet(f) for f in files], how="vertical_relaxed")
        keys = (
            _collect(signatures.select(PLAN_COLUMNS).join(wanted, on="case_id", how="semi"))
            .drop("value_score")
            .join(scores, on="case_id", how="left")
        )
        seen = keys.select("case_id", "recorded_at")
        if not cfg.enabled or keys.height == 0:
            every = signatures.select(PATH_COLUMNS).join(wanted, on="case_id", how="semi")
            paths.write(_collect(every))
            off = {"removed_by_dedup": 0, "cluster_sizes": {}}
            return DedupOutcome(None, off, seen, _close(paths))
        plan = plan_buckets(keys, cfg)
        del keys, wanted
        tables, parts, largest = [], [], []
        with _bucket_files(files, plan, work) as buckets:
            plan = replace(plan, assignment=plan.assignment.clear())  # dealt: counts only
            for bucket in buckets:
                rows = pl.read_parquet(bucket).drop("value_score")
                rows = rows.join(scores, on="case_id", how="left")
                clustering = cluster(rows, cfg)
                tables.append(clustering.table)
                parts.append(clustering.stats)
                largest.append(largest_clusters(clustering.table, rows, cfg.report_largest))
                paths.write(rows.select(PATH_COLUMNS))
                del rows, clustering
                release_memory()  # the features' heap (numpy, scipy: not polars' allocator)
    table = pl.concat(tables, rechunk=False).sort(["cluster_id", "rank"])
    tables.clear()  # the sorted copy is the only one now
    merged = Clustering(table, merge_stats(parts, plan))
    stats = dedup_stats(merged, merge_largest(largest, cfg.report_largest), cfg)
    release_memory()  # the features' freed heap (numpy, scipy) before the quotas run
    return DedupOutcome(table, stats, seen, _close(paths))


def _close(paths: FrameWriter) -> FrameRef:
    return paths.close(pl.DataFrame(schema={c: pl.String() for c in PATH_COLUMNS}))


def dedup_stats(
    clustering: Clustering, largest: list[LargestCluster], cfg: DedupConfig
) -> dict[str, Any]:
    """The dedup counts of the report and the manifest."""
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
    }
