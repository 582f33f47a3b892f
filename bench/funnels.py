"""Benchmark: the funnel stage (funnels + quotas) against ingest of the same data, same run.

    python bench/funnels.py                 # 1M generated cases (several minutes)
    python bench/funnels.py --cases 50000   # quick look

Generates native recordings, ingests them to canonical Parquet (timed: the baseline), runs every
funnel and the quotas over that Parquet (timed), each stage in its own process so its peak RSS is
its own. Then times `golden preview` on the first 100k cases. Target: funnel stage <= 0.3x ingest
time, memory bounded (scoring goes in batches; only small per-case decisions are kept).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _child import in_child, rss_mb

#: Cases per session in generated corpora (multi-turn sessions), to size the generator.
CASES_PER_SESSION = 1.5


def _ingest(recordings: str, out: str, queue: Any) -> None:
    from golden_distill.datasets.ingest import ingest

    started = time.perf_counter()
    summary = ingest([recordings], Path(out), overwrite=True)
    queue.put({"seconds": time.perf_counter() - started, "cases": summary.cases_written,
               "rss_mb": rss_mb()})  # fmt: skip


def _funnels(cases_dir: str, queue: Any) -> None:
    from golden_distill.filters.config import FunnelsConfig
    from golden_distill.filters.dedup.config import DedupConfig
    from golden_distill.filters.runner import score_cases
    from golden_distill.filters.selection import choose
    from golden_distill.filters.selection_stats import selection_stats

    cfg = FunnelsConfig()
    cfg.quotas.per_tenant_max = 0.2
    cfg.quotas.per_funnel_max = {"human_handoff": 50_000}
    started = time.perf_counter()
    # the flow's funnel stage: scores, then quotas over the candidates (dedup timed apart)
    decisions = choose(score_cases(cases_dir, cfg), None, cfg, DedupConfig(enabled=False))
    stats = selection_stats(decisions.decisions, cfg)
    queue.put({"seconds": time.perf_counter() - started, "cases": stats["cases"],
               "selected": stats["selected"], "rss_mb": rss_mb()})  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--preview-cases", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=None, help="Keep data here (default: tmp).")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-funnels-"))
    try:
        from golden_distill.synthetic import generate_corpus

        recordings, canonical = work / "recordings", work / "canonical"
        if not (recordings / "_truth.json").exists():
            sessions = max(1, int(args.cases / CASES_PER_SESSION))
            t = time.perf_counter()
            generate_corpus(recordings, sessions=sessions, seed=42, shards=8)
            print(f"generated {sessions:,} sessions in {time.perf_counter() - t:.1f} s")

        ing = in_child(_ingest, str(recordings), str(canonical))
        fun = in_child(_funnels, str(canonical / "cases"))
        ratio = fun["seconds"] / ing["seconds"]
        print(
            f"ingest (baseline): {ing['cases']:,} cases in {ing['seconds']:.1f} s "
            f"({ing['cases'] / ing['seconds']:,.0f} cases/s), peak RSS {ing['rss_mb']:,.0f} MB"
        )
        print(
            f"funnels + quotas:  {fun['cases']:,} cases in {fun['seconds']:.1f} s "
            f"({fun['cases'] / fun['seconds']:,.0f} cases/s), peak RSS {fun['rss_mb']:,.0f} MB, "
            f"{fun['selected']:,} selected"
        )
        print(f"ratio funnels/ingest: {ratio:.2f}x (target <= 0.30x)")

        import polars as pl

        sample = work / "preview-sample.parquet"
        pl.scan_parquet(str(canonical / "cases" / "*.parquet")).head(
            args.preview_cases
        ).sink_parquet(sample)
        golden = Path(sys.executable).with_name("golden")
        t = time.perf_counter()
        subprocess.run([str(golden), "preview", "--json", str(sample)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        wall = time.perf_counter() - t
        rows = pl.scan_parquet(sample).select(pl.len()).collect().item()
        print(
            f"golden preview on {rows:,} canonical cases: {wall:.1f} s wall (process start "
            f"included; raw recordings add ingest at the rate above)"
        )
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
