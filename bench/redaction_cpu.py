"""Benchmark: CPU seconds to redact a shard, this checkout against a baseline checkout, and
whether both write identical outputs.

Takes a kept benchmark run (``bench/end_to_end.py``'s run folder, read only) and redacts the
chosen cases of N of its shards in sequence in one process per checkout, as a redact worker
does (``flows.tasks.redact_body.redact_candidates``: one fresh redactor per shard, with the
base pseudonyms the key pass hands over in checkouts that have them, computed untimed). Both
checkouts run at the same time, so they share the machine's load; per-shard CPU
(``time.process_time``) is printed for each, and the ratio over all shards but the first (it
also pays the imports and the analyzer's first use) and the last (the faster checkout has
finished by then, so the other runs it with less contention). Then the outputs
are compared: the redacted table (Arrow IPC bytes), the quarantined ids and reasons, the stats
(entity counts, reasons, field inventory) and the published key digests must be identical.

    GOLDEN_PSEUDONYM_KEY=... .venv/bin/python bench/redaction_cpu.py \\
        --run /tmp/bench/e2e1m/run-XXXX --baseline-python /work/main/.venv/bin/python \\
        [--shards 6] [--start 0]

Each interpreter imports its own checkout (its venv's editable install).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def known_bases(cfg, chosen):  # type: ignore[no-untyped-def]
    """The base pseudonyms the flow's key pass hands to a shard's redaction
    (``redaction/known_bases.py``), or None for an older checkout without the hand-over."""
    try:
        from golden_distill.redaction.known_bases import KnownBases
    except ImportError:
        return None
    from golden_distill.flows.tasks.task_guards import run_key
    from golden_distill.redaction.key_scan import KeyScanner

    entries: list = []
    scanner = KeyScanner(cfg.redaction, run_key(cfg, None).secret)
    scanner.digests(chosen.to_pylist(), entries)
    return KnownBases.of(entries)


def child(run: Path, start: int, count: int, dump: Path) -> None:
    """Redact ``count`` shards of ``run`` from ``start``; one pickle of outputs per shard."""
    import polars as pl
    import pyarrow as pa

    from golden_distill.flows.config import load_pipeline_config
    from golden_distill.flows.tasks.redact_body import load_run_keys, redact_candidates
    from golden_distill.flows.work_folder import work_folder

    try:  # an older checkout, without process_caches, kept its caches between shards
        from golden_distill.redaction.process_caches import forget_values
    except ImportError:

        def forget_values() -> None:
            return None

    cfg = load_pipeline_config(str(run / "config.yaml"))
    keys_file = sorted(glob.glob(str(run / "work/run-keys/*.npz")))
    run_keys = load_run_keys(work_folder(cfg), keys_file[-1]) if keys_file else None
    shards = sorted(glob.glob(str(run / "work/shards/*")))[start : start + count]
    for i, shard in enumerate(shards, start):
        done = sorted(glob.glob(shard + "/redacted-*/redacted.parquet"))[0]
        ids = set(pl.read_parquet(done, columns=["case_id"]).get_column("case_id").to_list())
        for line in (Path(done).parent / "quarantine.jsonl").read_text().splitlines():
            if line.strip():
                ids.add(json.loads(line).get("case_id"))
        ids.discard(None)
        chosen = (
            pl.scan_parquet(shard + "/candidates.parquet")
            .filter(pl.col("case_id").is_in(pl.Series(sorted(ids)).implode()))
            .collect()
            .to_arrow()
        )
        quarantine = dump / f"quarantine-{i}.jsonl"
        known = known_bases(cfg, chosen)  # the key pass's share (untimed), when it has one
        cpu = time.process_time()
        if known is None:
            table, quarantined, stats, published = redact_candidates(
                chosen, cfg, quarantine, None, run_keys
            )
        else:
            table, quarantined, stats, published = redact_candidates(
                chosen, cfg, quarantine, None, run_keys, known
            )
        cpu = time.process_time() - cpu
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        out = {
            "rows": chosen.num_rows,
            "cpu": cpu,
            "table": sink.getvalue().to_pybytes(),
            "quarantined": quarantined,
            "stats": stats,
            "published": pickle.dumps(published),
            "quarantine_file": quarantine.read_text() if quarantine.exists() else "",
        }
        (dump / f"shard-{i:04d}.pkl").write_bytes(pickle.dumps(out))
        print(f"shard {i}: {chosen.num_rows} cases, {cpu:.2f} s CPU", flush=True)
        forget_values()  # what a helper does between shards, in checkouts that do it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a kept benchmark run folder (read only)")
    parser.add_argument("--baseline-python", help="the baseline checkout's interpreter")
    parser.add_argument("--shards", type=int, default=6)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is None or (args.child is None and args.baseline_python is None):
        parser.error("--run and --baseline-python are required")
    if args.child is not None:
        child(args.run, args.start, args.shards, args.child)
        return
    if not os.environ.get("GOLDEN_PSEUDONYM_KEY"):
        parser.error("set GOLDEN_PSEUDONYM_KEY (the run's pseudonym key)")
    with tempfile.TemporaryDirectory(prefix="redaction-cpu-") as tmp:
        dumps = {"baseline": Path(tmp) / "baseline", "this": Path(tmp) / "this"}
        procs = {}
        for name, python in (("baseline", args.baseline_python), ("this", sys.executable)):
            dumps[name].mkdir(mode=0o700)
            cmd = [python, __file__, "--run", str(args.run), "--child", str(dumps[name])]
            cmd += ["--shards", str(args.shards), "--start", str(args.start)]
            procs[name] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        for name, proc in procs.items():
            if proc.wait() != 0:
                sys.exit(f"{name} run failed (exit {proc.returncode})")
        load = os.getloadavg()
        names = sorted(p.name for p in dumps["this"].glob("shard-*.pkl"))
        cpu: dict[str, list[float]] = {"baseline": [], "this": []}
        same = 0
        for name in names:
            a, b = (pickle.loads((dumps[k] / name).read_bytes()) for k in ("baseline", "this"))
            cpu["baseline"].append(a["cpu"])
            cpu["this"].append(b["cpu"])
            keys = ("table", "quarantined", "stats", "published", "quarantine_file")
            diff = [k for k in keys if a[k] != b[k]]
            same += not diff
            print(
                f"{name[6:10]}: {a['rows']} cases  baseline {a['cpu']:.2f} s  this "
                f"{b['cpu']:.2f} s  {'identical' if not diff else 'DIFFERENT: ' + ', '.join(diff)}"
            )
    # the first shard also pays imports and first uses; during the last one the faster run has
    # ended, so the slower one runs with less contention: both are left out of the ratio
    steady = {k: (v[1:-1] if len(v) >= 3 else v) for k, v in cpu.items()}
    base = sum(steady["baseline"]) / len(steady["baseline"])
    this = sum(steady["this"]) / len(steady["this"])
    print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"CPU per shard (all but the first and last): baseline {base:.2f} s, this {this:.2f} s")
    print(f"ratio this/baseline: {this / base:.3f}  ({(1 - this / base) * 100:.1f}% less CPU)")
    print(f"outputs identical: {same}/{len(names)} shards")
    if same != len(names):
        sys.exit(1)


if __name__ == "__main__":
    main()
