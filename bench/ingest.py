"""Benchmark: the native reader's throughput against a bare orjson loop, and its memory.

    python bench/ingest.py                      # 200k generated sessions (several minutes)
    python bench/ingest.py --sessions 20000     # quick look

Generates native recordings once (cached under the temp dir, keyed by size and seed), then in
the same run and on the same file:

* baseline: a plain loop of ``orjson.loads`` per line with a trivial filter (``recordId`` set);
* reader: ``NativeAdapter.read_batches`` (parse, validate, convert, canonical hash, Arrow batches);
* ingest: ``ingest()`` end to end (the reader plus Parquet shards, quarantine and summary);
* reader xN: the same reader on line-aligned byte ranges of the same file in ``--jobs`` spawned
  worker processes (``ingest_parallel``: planning, newline counts, worker start-up included);
* ingest xN: ``ingest(..., jobs=N)`` end to end.

Each timing is the best of ``--repeat`` runs (the machine may be shared). Prints MB/s of each,
CPU seconds (this process plus its finished workers), the ratios to the baseline (target for
the reader >= 0.5x) and the cores a contender got on average (cpu / wall: below N for an xN
contender means the machine was busy with other work), then the peak RSS of ``ingest()`` in a
fresh process on the first tenth of the file (1x) and on all of it (10x), which should stay
roughly flat, and the peak of the summed RSS of ``ingest(..., jobs=N)`` and its workers (sampled
with psutil).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 0.5


def corpus_file(sessions: int, seed: int) -> Path:
    """The generated recordings file (plain JSONL, one shard), generating it if missing."""
    from golden_distill.synthetic import generate_corpus

    folder = Path(tempfile.gettempdir()) / f"golden-bench-ingest-{sessions}-{seed}"
    path = folder / "recordings-0000.jsonl"
    if not (folder / "_truth.json").exists():
        print(f"generating {sessions:,} sessions into {folder} ...", flush=True)
        started = time.perf_counter()
        generate_corpus(folder, sessions=sessions, seed=seed, shards=1, compress=None)
        print(f"  generated in {time.perf_counter() - started:.0f}s", flush=True)
    return path


def first_lines(path: Path, fraction: int) -> Path:
    """A file holding the first 1/``fraction`` of ``path``'s lines (the 1x input)."""
    out = path.with_name(f"first-1-of-{fraction}.jsonl")
    if not out.exists():
        with path.open("rb") as fh:
            total = sum(1 for _ in fh)
        with path.open("rb") as src, out.open("wb") as dst:
            for n, line in enumerate(src):
                if n >= total // fraction:
                    break
                dst.write(line)
    return out


def baseline(path: Path) -> tuple[float, int]:
    """Seconds and records for the bare loop: orjson.loads per line, keep lines with recordId."""
    import orjson

    kept = 0
    started = time.perf_counter()
    with path.open("rb") as fh:
        for line in fh:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if type(record) is dict and record.get("recordId"):
                kept += 1
    return time.perf_counter() - started, kept


def reader(path: Path) -> tuple[float, int]:
    """Seconds and cases for the native reader producing Arrow batches (no files written)."""
    from golden_distill.datasets.quarantine import Quarantine
    from golden_distill.datasets.sources.base import ReadStats
    from golden_distill.datasets.sources.native import NativeAdapter

    stats = ReadStats()
    started = time.perf_counter()
    for _ in NativeAdapter().read_batches(str(path), Quarantine(), stats):
        pass
    return time.perf_counter() - started, stats.cases


def ingest_once(path: Path, out: Path, jobs: int = 1) -> tuple[float, int]:
    from golden_distill.datasets.ingest import ingest

    started = time.perf_counter()
    summary = ingest([str(path)], out, overwrite=True, jobs=jobs)
    return time.perf_counter() - started, summary.cases_written


class _Discard:
    """A shard writer that keeps nothing (the parallel reader figure writes no files)."""

    def write_batch(self, batch: object) -> None:
        pass


def reader_unit(unit: object) -> int:
    """Cases the native reader makes of one byte range (runs in a spawned worker)."""
    from golden_distill.datasets.ingest_parallel import _read_range
    from golden_distill.datasets.quarantine import Quarantine
    from golden_distill.datasets.sources.base import ReadStats
    from golden_distill.datasets.sources.config import IngestConfig

    stats = ReadStats()
    quarantine = Quarantine()
    _read_range(unit, IngestConfig(), _Discard(), quarantine, stats)  # type: ignore[arg-type]
    return stats.cases


def parallel_reader(path: Path, jobs: int) -> tuple[float, int]:
    """Seconds and cases for the reader on ``jobs`` processes, ranges as ingest plans them."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from golden_distill.datasets import ingest_parallel as par

    started = time.perf_counter()
    units = par.plan_units([(str(path), "native", None)], jobs)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        units = par._number_lines(pool, units)
        cases = sum(pool.map(reader_unit, units))
    return time.perf_counter() - started, cases


def _cpu_now() -> float:
    """CPU seconds of this process and of its children that have finished."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def summed_peak_rss_mb(path: Path, out: Path, jobs: int) -> float:
    """Peak of the summed RSS (MB) of a fresh ``ingest(jobs=...)`` process and its workers."""
    import psutil

    code = (
        "import sys; from pathlib import Path\n"
        "from golden_distill.datasets.ingest import ingest\n"
        "if __name__ == '__main__':\n"
        "    ingest([sys.argv[1]], Path(sys.argv[2]), overwrite=True, jobs=int(sys.argv[3]))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(path), str(out), str(jobs)])
    watched = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        total = 0
        with contextlib.suppress(psutil.Error):
            for p in [watched, *watched.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += p.memory_info().rss
        peak = max(peak, total)
        time.sleep(0.1)
    if proc.returncode:
        raise RuntimeError(f"ingest with jobs={jobs} failed ({proc.returncode})")
    return peak / 1e6


def peak_rss_mb(path: Path, out: Path) -> float:
    """Peak RSS (MB) of a fresh process that runs ``ingest()`` on ``path``."""
    # VmHWM, not ru_maxrss: a child started by fork+exec inherits the parent's ru_maxrss.
    code = (
        "import sys; from pathlib import Path\n"
        "from golden_distill.datasets.ingest import ingest\n"
        "ingest([sys.argv[1]], Path(sys.argv[2]), overwrite=True)\n"
        "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
        "print(int(hwm.split()[1]) / 1024)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(path), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200_000, help="sessions to generate")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=2, help="timings per contender (best)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes of the xN figures")
    args = parser.parse_args()

    path = corpus_file(args.sessions, args.seed)
    size_mb = path.stat().st_size / 1e6
    work = Path(tempfile.mkdtemp(prefix="golden-bench-ingest-out-"))
    try:
        best: dict[str, tuple[float, float, int]] = {}
        for _ in range(args.repeat):  # interleaved, so load changes hit every contender
            for name, run in (
                ("baseline", lambda: baseline(path)),
                ("reader", lambda: reader(path)),
                ("ingest", lambda: ingest_once(path, work / "out")),
                (f"reader x{args.jobs}", lambda: parallel_reader(path, args.jobs)),
                (f"ingest x{args.jobs}", lambda: ingest_once(path, work / "out", args.jobs)),
            ):
                cpu_start = _cpu_now()
                seconds, count = run()
                cpu = _cpu_now() - cpu_start
                if name not in best or seconds < best[name][0]:
                    best[name] = (seconds, cpu, count)
        base_s, base_cpu = best["baseline"][0], best["baseline"][1]
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"\ninput: {path.name}, {size_mb:,.1f} MB, {args.sessions:,} sessions")
        print(f"cores: {os.cpu_count()}, load average at the end (1/5/15 min): {load}")
        print(
            f"{'contender':<11} {'wall s':>8} {'cpu s':>8} {'MB/s':>8} {'records':>10} "
            f"{'vs baseline':>12} {'(cpu)':>7} {'cores':>6}"
        )
        for name, (seconds, cpu, count) in best.items():
            print(
                f"{name:<11} {seconds:8.2f} {cpu:8.2f} {size_mb / seconds:8.1f} {count:10,} "
                f"{base_s / seconds:11.2f}x {base_cpu / cpu:6.2f}x {cpu / seconds:6.2f}"
            )
        ratio = base_s / best["reader"][0]
        verdict = "meets" if ratio >= TARGET_RATIO else "BELOW"
        print(f"reader/baseline = {ratio:.2f}x ({verdict} the {TARGET_RATIO}x target)")
        par_ratio = base_s / best[f"reader x{args.jobs}"][0]
        verdict = "meets" if par_ratio >= TARGET_RATIO else "BELOW"
        print(
            f"reader x{args.jobs}/baseline = {par_ratio:.2f}x wall ({verdict} the target; the "
            f"baseline uses one core), speed-up over one reader "
            f"{best['reader'][0] / best[f'reader x{args.jobs}'][0]:.2f}x"
        )

        small = first_lines(path, 10)
        rss_1x = peak_rss_mb(small, work / "rss-1x")
        rss_10x = peak_rss_mb(path, work / "rss-10x")
        print(
            f"peak RSS of ingest(): 1x ({small.stat().st_size / 1e6:,.0f} MB) {rss_1x:,.0f} MB, "
            f"10x ({size_mb:,.0f} MB) {rss_10x:,.0f} MB, ratio {rss_10x / rss_1x:.2f}"
        )
        rss_par = summed_peak_rss_mb(path, work / "rss-par", args.jobs)
        print(
            f"peak summed RSS of ingest(jobs={args.jobs}) + workers, 10x: {rss_par:,.0f} MB "
            "(psutil, sampled every 0.1 s)"
        )
        print(
            f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
