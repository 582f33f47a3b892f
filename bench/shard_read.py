"""Benchmark: the shard step's read, straight into memory against a Parquet round trip.

The flow's shard task reads its source with ``ingest_table`` (datasets/ingest.py: the cases kept
as one Arrow table). The read it replaced ran ``ingest()`` into a canonical Parquet file
(zstd) and read that file back whole; this measures both, alternately, on the same recordings
files:

    python bench/shard_read.py                          # 6 files of a generated corpus
    python bench/shard_read.py --files /tmp/bench/e2e1m/corpus-1000000/recordings-004*.jsonl

Prints, per way, the CPU seconds per file (the best of ``--repeat`` passes: the machine may be
shared), the ratio in memory / round trip, and the peak RSS of each way in a fresh process on
the first file. Both ways must give equal tables (checked on every file).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.ingest import ingest, ingest_table
from golden_distill.datasets.schema import CASE_SCHEMA


def round_trip(source: str, out: Path) -> pa.Table:
    """The replaced read: canonical Parquet shards, then read back whole."""
    summary = ingest([source], out, fmt="native")
    return pa.concat_tables([pq.read_table(p, schema=CASE_SCHEMA) for p in summary.shards])


def in_memory(source: str, out: Path) -> pa.Table:
    """The shard step's read now (``flows/tasks/shard.py`` ``read_shard``)."""
    return ingest_table([source], out, fmt="native")[0]


WAYS = {"round trip": round_trip, "in memory": in_memory}


def cpu_seconds(way: str, files: list[str], scratch: Path) -> tuple[float, list[pa.Table]]:
    tables, started = [], time.process_time()
    for n, source in enumerate(files):
        out = scratch / f"{way.replace(' ', '-')}-{n}"
        tables.append(WAYS[way](source, out))
        shutil.rmtree(out)
    return time.process_time() - started, tables


def high_water_mb() -> float:
    """This process's peak RSS (``VmHWM``: per address space, so unlike ``ru_maxrss`` it does
    not start from the parent's size at fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux


def peak_rss_mb(way: str, source: str) -> float:
    """Peak RSS of a fresh process that reads ``source`` one way (imports included)."""
    out = subprocess.run(
        [sys.executable, __file__, "--peak-of", way, "--files", source],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip())


def generated_files(count: int) -> list[str]:
    folder = Path(tempfile.gettempdir()) / f"golden-bench-shard-read-{count}"
    if not folder.exists():
        subprocess.run(
            [sys.executable, "-m", "golden_distill.flows.cli", "generate", "--sessions",
             str(count * 10_000), "--out", str(folder), "--shards", str(count)],
            check=True,
        )  # fmt: skip
    return sorted(str(p) for p in folder.glob("recordings-*.jsonl"))[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="*", help="recordings files (default: generated)")
    parser.add_argument("--count", type=int, default=6, help="generated files when no --files")
    parser.add_argument("--repeat", type=int, default=2, help="passes per way (best counts)")
    parser.add_argument("--peak-of", choices=sorted(WAYS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    files = args.files or generated_files(args.count)
    if args.peak_of:
        with tempfile.TemporaryDirectory() as tmp:
            WAYS[args.peak_of](files[0], Path(tmp) / "out")
        print(high_water_mb())
        return
    best = {way: float("inf") for way in WAYS}
    with tempfile.TemporaryDirectory(prefix="shard-read-") as tmp:
        for _ in range(args.repeat):
            found = {}
            for way in WAYS:  # alternating, so both see the same load
                seconds, found[way] = cpu_seconds(way, files, Path(tmp))
                best[way] = min(best[way], seconds)
            pairs = zip(found["round trip"], found["in memory"], strict=True)
            if not all(a.equals(b) for a, b in pairs):
                sys.exit("the two ways read different tables")
    print(f"{len(files)} file(s), best of {args.repeat}; equal tables on every file")
    for way, seconds in best.items():
        peak = peak_rss_mb(way, files[0])
        print(f"  {way:>10}: {seconds / len(files):6.3f} s CPU per file, peak RSS {peak:.0f} MB")
    ratio = best["in memory"] / best["round trip"]
    print(f"in memory / round trip: {ratio:.2f} of the CPU")


if __name__ == "__main__":
    main()
