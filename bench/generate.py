"""Benchmark: the synthetic traffic generator against the cost of just writing the same bytes.

    python bench/generate.py                    # 1M sessions, zstd (several minutes, ~1 GB)
    python bench/generate.py --sessions 50000   # quick look

Baseline (same run, same machine): serialising one fixed recording with orjson and writing it
as many times as the generator wrote records, through the same compressor: the floor any
generator pays for output. The ratio says what building realistic, varied, truth-tracked records
costs on top. Peak RSS is printed for the generator's own process (bounded memory claim).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import tempfile
import time
from pathlib import Path
from typing import Any


def _generate(out: str, sessions: int, compress: str, queue: Any) -> None:
    from golden_distill.synthetic import generate_corpus

    started = time.perf_counter()
    cpu = time.process_time()
    summary = generate_corpus(
        Path(out),
        sessions=sessions,
        seed=1,
        shards=4,
        compress=compress,
        oversized_limit=1 << 20,
        jobs=2,
    )
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the worker processes, joined
    queue.put(
        {
            "seconds": time.perf_counter() - started,
            "cpu": time.process_time() - cpu + children.ru_utime + children.ru_stime,
            "records": summary.records,
            "bytes": summary.bytes_written,
            "rss_mb": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, children.ru_maxrss)
            / 1024,
        }
    )


def _baseline(out: str, records: int, compress: str, queue: Any) -> None:
    import zlib

    import orjson
    import zstandard

    from golden_distill.synthetic.writer import ShardStream

    sample = next((Path(out).parent / "gen").glob("recordings-0000*"))
    data = sample.read_bytes()
    raw = (
        zlib.decompressobj(wbits=31).decompress(data)
        if compress == "gz"
        else zstandard.ZstdDecompressor().decompressobj().decompress(data)
    )
    record = orjson.loads(raw.split(b"\n", 1)[0])
    started = time.perf_counter()
    stream = ShardStream(Path(out) / f"baseline.jsonl.{compress}", compress)
    for _ in range(records):
        stream.write_line(orjson.dumps(record))
    stream.close()
    queue.put({"seconds": time.perf_counter() - started})


def _run(target: Any, *args: Any) -> dict[str, Any]:
    queue: Any = mp.Queue()
    proc = mp.Process(target=target, args=(*args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--compress", choices=("gz", "zst"), default="zst")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
        gen_dir, base_dir = Path(tmp) / "gen", Path(tmp) / "base"
        base_dir.mkdir()
        gen = _run(_generate, str(gen_dir), args.sessions, args.compress)
        base = _run(_baseline, str(base_dir), gen["records"], args.compress)
    rate = gen["records"] / gen["seconds"]
    print(
        f"generator: {args.sessions:,} sessions, {gen['records']:,} records, "
        f"{gen['bytes'] / 1e6:,.0f} MB {args.compress}, {gen['seconds']:.1f} s wall "
        f"({gen['cpu']:.1f} s CPU, workers included), {rate:,.0f} records/s, "
        f"peak RSS of one process {gen['rss_mb']:,.0f} MB"
    )
    print(f"baseline (orjson + same compressor, one fixed record): {base['seconds']:.1f} s")
    print(f"ratio generator / baseline: {gen['seconds'] / base['seconds']:.1f}x")


if __name__ == "__main__":
    main()
