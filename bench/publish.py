"""Benchmark: publish and read back a golden set, beside raw pyarrow on the same table.

    .venv/bin/python bench/publish.py              # 100k cases (the recorded figure)
    .venv/bin/python bench/publish.py --cases 5000 # quick check while developing

Prints, for a local store: publish MB/s (staging, the replay check on every step, checksums and
the rename), read-back MB/s (every file's sha256 verified, decoded to Arrow), the time to open a
version and fetch one case by id (verified and not), and the same table written and read by
plain ``pyarrow.parquet`` in the same run as the baseline, with the ratios.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.schema import GOLDEN_SCHEMA, make_case_id
from golden_distill.datasets.store.publish import publish_version

TOOLS = ["erp_get_order", "erp_update_order", "crm_get_customer", "fin_refund", "kb_search"]
FUNNELS = ["high_value_mutating", "recovery", "human_handoff"]


def make_rows(n: int, seed: int = 7) -> list[dict]:
    """Synthetic GOLDEN_SCHEMA rows: 3-10 steps each, realistic JSON payload sizes."""
    rng = random.Random(seed)
    start = datetime(2026, 11, 28, tzinfo=UTC)
    rows = []
    for i in range(n):
        steps, seen = [], {}
        for seq in range(rng.randint(3, 10)):
            name = rng.choice(TOOLS)
            seen[name] = seen.get(name, 0) + 1
            args = {"orderId": f"ORD-{rng.randint(1, 10**6)}", "requestId": f"r{i}-{seq}"}
            response = {
                "status": rng.choice(["PENDING", "APPROVED", "SHIPPED"]),
                "amount": round(rng.uniform(1, 20000), 2),
                "items": [{"sku": f"SKU-{rng.randint(1, 999)}", "qty": 1} for _ in range(3)],
                "note": "x" * rng.randint(20, 200),
            }
            arguments = json.dumps(args)
            steps.append(
                {
                    "seq": seq,
                    "kind": "tool",
                    "name": name,
                    "occurrence": seen[name],
                    "arguments": arguments,
                    "canonical_args_sha256": canonical_args_sha256(args),
                    "response": json.dumps(response),
                    "status": "ok",
                    "is_mutating": name.endswith(("update_order", "refund")),
                    "system": name.split("_")[0].upper(),
                    "latency_ms": rng.randint(5, 500),
                    "started_at": start + timedelta(seconds=i + seq),
                }
            )
        rows.append(
            {
                "case_id": make_case_id("native", f"bench-{i}"),
                "trace_id": f"t{i}",
                "session_id": f"s{i // 3}",
                "turn_index": i % 3,
                "tenant_id": f"tenant-{i % 20}",
                "user_id": f"user-{i % 5000}",
                "recorded_at": start + timedelta(seconds=i),
                "user_input": "please check my order " + "y" * rng.randint(10, 200),
                "steps": steps,
                "outcome": {"status": "success", "final_state": "DONE"},
                "source": {"format": "native", "uri": "bench.jsonl", "position": i + 1},
                "funnels": [rng.choice(FUNNELS), "redacted"],
                "value_score": rng.random(),
            }
        )
    return rows


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    args = parser.parse_args()

    print(f"building {args.cases:,} synthetic cases...", file=sys.stderr)
    table = pa.Table.from_pylist(make_rows(args.cases), schema=GOLDEN_SCHEMA)
    work = Path(tempfile.mkdtemp(prefix="bench-publish-"))
    try:
        store = str(work / "store")
        result, t_publish = timed(lambda: publish_version(store, "bench", cases=table))
        size = sum(f["size"] for f in result.manifest["files"] if f["role"] == "cases")
        mb = size / 1e6

        golden, t_open = timed(lambda: open_set(store, "bench@latest"))
        read, t_read = timed(golden.read_table)
        assert read.num_rows == args.cases

        wanted = table.column("case_id")[args.cases // 2].as_py()
        cold = open_set(store, "bench@latest", verify=False)
        _, t_fetch_fast = timed(lambda: cold.get(wanted))
        _, t_fetch_again = timed(lambda: cold.get(wanted))
        checked = open_set(store, "bench@latest")
        _, t_fetch_verified = timed(lambda: checked.get(wanted))
        _, t_iter = timed(lambda: sum(1 for _ in open_set(store, "bench").cases()))

        raw = work / "raw.parquet"
        _, t_raw_write = timed(lambda: pq.write_table(table, raw, compression="zstd"))
        _, t_raw_read = timed(lambda: pq.read_table(raw))
        raw_mb = raw.stat().st_size / 1e6
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"cases: {args.cases:,}   case files: {mb:.1f} MB (raw pyarrow file {raw_mb:.1f} MB)")
    phases = ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items())
    print(f"publish:   {t_publish:6.2f}s  {mb / t_publish:7.1f} MB/s   ({phases})")
    print(f"raw write: {t_raw_write:6.2f}s  {raw_mb / t_raw_write:7.1f} MB/s")
    print(f"  publish / raw write time: {t_publish / t_raw_write:.1f}x")
    print(f"read back: {t_read:6.2f}s  {mb / t_read:7.1f} MB/s   (sha256 verified)")
    print(f"raw read:  {t_raw_read:6.2f}s  {raw_mb / t_raw_read:7.1f} MB/s")
    print(f"  read back / raw read time: {t_read / t_raw_read:.1f}x")
    print(f"iterate ReplayCase objects: {t_iter:.2f}s ({args.cases / t_iter:,.0f} cases/s)")
    print(f"open version: {t_open * 1e3:.1f} ms")
    print(
        f"fetch one case by id: {t_fetch_fast * 1e3:.1f} ms unverified cold, "
        f"{t_fetch_again * 1e3:.1f} ms warm, {t_fetch_verified * 1e3:.1f} ms with the file's "
        "sha256 verified first"
    )


if __name__ == "__main__":
    main()
