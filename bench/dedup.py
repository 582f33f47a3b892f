"""Benchmark: dedup (signatures per shard, global clustering, representatives) at two sizes.

    python bench/dedup.py                          # 200k and 400k generated cases
    python bench/dedup.py --sizes 20000 40000      # quick look

Generates native recordings once (sized for the largest run) and ingests them to canonical
Parquet; neither is timed. Each size then runs in its own process (so its peak RSS is its own):
load the first N cases (untimed), add the columns funnels would have set (value_score, funnels),
then time dedup exactly as the flow runs it: ``signatures`` per shard of 100k cases,
``cluster`` over all signatures, ``choose_representatives``. The smallest size is the baseline;
the figure that matters is the growth factor (time at 2x the cases / time at 1x).

Targets: 200k cases in <= 60 s on 2 cores; 2x the cases in <= 2.5x the time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _child import in_child, rss_mb

#: Cases per session in generated corpora (multi-turn sessions), to size the generator.
CASES_PER_SESSION = 1.5
#: Cases per shard in the signature phase (the flow's ingest writes 100k-case shards).
SHARD_ROWS = 100_000
TARGET_SECONDS_200K = 60.0
TARGET_GROWTH = 2.5


def _run_size(cases_dir: str, size: int, queue: Any) -> None:
    import polars as pl

    from golden_distill.filters.dedup import (
        DedupConfig,
        choose_representatives,
        cluster,
        signatures,
    )

    frame = pl.scan_parquet(f"{cases_dir}/*.parquet").head(size).collect()
    score = [int(hashlib.sha256(c.encode()).hexdigest()[:8], 16) / 2**32 for c in frame["case_id"]]
    frame = frame.with_columns(
        pl.Series("value_score", score, dtype=pl.Float64),
        pl.lit(["high_value_mutating"], dtype=pl.List(pl.String)).alias("funnels"),
    )
    loaded_rss = rss_mb()
    cfg = DedupConfig()
    started = time.perf_counter()
    parts = [
        signatures(frame.slice(offset, SHARD_ROWS), cfg)
        for offset in range(0, frame.height, SHARD_ROWS)
    ]
    sig = pl.concat(parts)
    signed = time.perf_counter()
    clustering = cluster(sig, cfg)
    clustered = time.perf_counter()
    kept = choose_representatives(clustering.table, keep_per_cluster=cfg.keep_per_cluster)
    done = time.perf_counter()
    stats = clustering.stats
    queue.put(
        {
            "cases": frame.height,
            "seconds": done - started,
            "signatures_s": signed - started,
            "cluster_s": clustered - signed,
            "choose_s": done - clustered,
            "cluster_phases": stats.seconds,
            "kept": kept.height,
            "clusters": stats.clusters,
            "distinct_runs": stats.distinct_runs,
            "groups": stats.groups,
            "largest_group": stats.largest_group,
            "partitioned_groups": stats.partitioned_groups,
            "merged_exact": stats.merged_exact,
            "merged_near": stats.merged_near,
            "loaded_rss_mb": loaded_rss,
            "peak_rss_mb": rss_mb(),
        }
    )


def _prepare(work: Path, cases: int) -> Path:
    """Generated recordings ingested to canonical Parquet (reused when already there)."""
    from golden_distill.datasets.ingest import ingest
    from golden_distill.synthetic import generate_corpus

    recordings, canonical = work / "recordings", work / "canonical"
    if not (canonical / "summary.json").exists():
        sessions = max(1, int(cases / CASES_PER_SESSION) + 1)
        t = time.perf_counter()
        generate_corpus(recordings, sessions=sessions, seed=20261130, shards=2)
        print(f"generated {sessions:,} sessions in {time.perf_counter() - t:.1f} s (not timed)")
        t = time.perf_counter()
        sources = sorted(str(p) for p in recordings.glob("recordings-*"))
        summary = ingest(sources, canonical, overwrite=True)
        print(f"ingested {summary.cases_written:,} cases in {time.perf_counter() - t:.1f} s")
    return canonical / "cases"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[200_000, 400_000])
    parser.add_argument("--work", type=Path, default=None, help="Keep data here (default: tmp).")
    args = parser.parse_args()
    small, large = sorted(args.sizes)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-dedup-"))
    try:
        cases_dir = _prepare(work, int(large * 1.02))
        print(f"cpus: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.1f}")
        results = [in_child(_run_size, str(cases_dir), n) for n in (small, large)]
        for r in results:
            print(
                f"{r['cases']:>8,} cases: {r['seconds']:6.1f} s "
                f"(signatures {r['signatures_s']:.1f}, cluster {r['cluster_s']:.1f} "
                f"{r['cluster_phases']}, choose {r['choose_s']:.1f}); "
                f"peak RSS {r['peak_rss_mb']:,.0f} MB "
                f"({r['loaded_rss_mb']:,.0f} MB after loading); "
                f"{r['distinct_runs']:,} distinct runs, {r['groups']:,} groups "
                f"(largest {r['largest_group']:,}, {r['partitioned_groups']} partitioned), "
                f"{r['clusters']:,} clusters, kept {r['kept']:,}, "
                f"merged exact {r['merged_exact']:,} near {r['merged_near']:,}"
            )
        base, big = results
        growth = big["seconds"] / base["seconds"]
        size_ratio = big["cases"] / base["cases"]
        per_200k = base["seconds"] * 200_000 / base["cases"]
        print(f"baseline: {base['cases']:,} cases in {base['seconds']:.1f} s")
        rss_growth = big["peak_rss_mb"] / base["peak_rss_mb"]
        print(
            f"growth: {size_ratio:.2f}x the cases took {growth:.2f}x the time "
            f"(target <= {TARGET_GROWTH}x at 2x); peak RSS {rss_growth:.2f}x"
        )
        print(
            f"target: 200k cases <= {TARGET_SECONDS_200K:.0f} s -> "
            f"{'met' if per_200k <= TARGET_SECONDS_200K else 'MISSED'} "
            f"({per_200k:.1f} s scaled to 200k); growth "
            f"{'met' if growth <= TARGET_GROWTH else 'MISSED'}"
        )
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
