"""Publish peak RSS at two set sizes: streamed (bucketed) publishing vs sorting in memory.

    .venv/bin/python bench/publish_rss.py                         # 100k and 200k cases
    .venv/bin/python bench/publish_rss.py --sizes 20000 40000     # quick check

For each size, synthetic GOLDEN_SCHEMA cases are written as 10k-row Parquet parts (as the flow
hands them to publish; not timed), then published in a child process twice: from the part files
(the flow's path: range buckets sorted one at a time, datasets/store/case_buckets.py) and, as the
baseline measured in the same invocation, from one in-memory table (the old path: the whole set
loaded and sorted). Prints the peak RSS of each child and the ratio larger/smaller size: flat
means the streamed ratio stays near 1.0 (target <= 1.2) while the in-memory one grows with size.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from publish import make_rows  # the sibling bench's case generator

from golden_distill.datasets.schema import GOLDEN_SCHEMA, make_case_id

CHUNK = 10_000

CHILD = """
import sys
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
from golden_distill.datasets.store.publish import publish_version
parts = sorted(Path(sys.argv[1]).glob("part-*.parquet"))
if sys.argv[3] == "memory":
    cases = pa.concat_tables([pq.read_table(p) for p in parts])
else:
    cases = parts
publish_version(sys.argv[2], "bench", cases=cases)
"""


def write_parts(folder: Path, size: int) -> None:
    folder.mkdir(parents=True)
    for start in range(0, size, CHUNK):
        n = min(CHUNK, size - start)
        table = pa.Table.from_pylist(make_rows(n, seed=start), schema=GOLDEN_SCHEMA)
        ids = pa.array([make_case_id("native", f"bench-{start + i}") for i in range(n)])
        table = table.set_column(0, "case_id", ids)
        pq.write_table(table, folder / f"part-{start // CHUNK:05d}.parquet")


def peak_rss(args: list[str]) -> tuple[float, float]:
    """(peak RSS of the child's process tree in GB, wall seconds)."""
    started = time.perf_counter()
    child = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    proc = psutil.Process(child.pid)
    peak = 0
    while child.poll() is None:
        with contextlib.suppress(psutil.Error):
            peak = max(peak, sum(p.memory_info().rss for p in [proc, *proc.children(True)]))
        time.sleep(0.1)
    _, err = child.communicate()
    if child.returncode:
        sys.exit(f"publish failed:\n{err[-2000:]}")
    return peak / 2**30, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[100_000, 200_000])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-publish-rss-"))
    found: dict[tuple[str, int], float] = {}
    try:
        for size in args.sizes:
            parts = work / f"parts-{size}"
            print(f"writing {size:,} cases as parts (not timed)...", flush=True)
            write_parts(parts, size)
            for mode in ("streamed", "memory"):
                store = work / f"store-{size}-{mode}"
                gb, seconds = peak_rss([sys.executable, "-c", CHILD, str(parts), str(store), mode])
                found[(mode, size)] = gb
                print(f"  {size:>9,} cases  {mode:8s}  peak RSS {gb:5.2f} GB  {seconds:6.1f} s")
                shutil.rmtree(store, ignore_errors=True)
            shutil.rmtree(parts, ignore_errors=True)
        small, large = args.sizes
        for mode in ("streamed", "memory"):
            ratio = found[(mode, large)] / found[(mode, small)]
            target = "  (target <= 1.2)" if mode == "streamed" else "  (baseline)"
            print(f"{mode:8s} peak RSS {large:,} / {small:,} cases: {ratio:.2f}{target}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
