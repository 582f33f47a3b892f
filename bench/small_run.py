"""A small first run: 300 tau-bench sessions, wall time against the flow's own stage time.

    .venv/bin/python bench/small_run.py                 # 300 records, the three modes
    .venv/bin/python bench/small_run.py --records 400 --repeat 3

Issue 15 point 3: a first run of 300 sessions should take at most 2x its own summed stage time
(the stages the flow times itself and records in the published manifest,
``stats.stage_seconds``) in the documented lighter mode (`golden run --local`); the rest is
start-up (Python imports, Prefect's temporary API in the default mode).

The first ``--records`` runs of the vendored tau-bench files (tests/data/tau-bench: airline,
then retail) are written as one JSON file (not timed). Each measured run is a fresh `golden run`
child process with ``configs/tau-bench.yaml``, a cold work folder, an empty store and its own
PREFECT_HOME; the modes alternate so load drifts hit all. Prints, per run and as the median:
wall time, summed stage time, their ratio, and the load average. ``default`` against ``nocache``
is what the Prefect database template (flows/prefect_db.py) saves a run with a new PREFECT_HOME;
the bench's first ``default`` run makes the template, so use ``--repeat`` >= 3 for the median.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "tau-bench"
RUN_FILES = ("airline-gpt-4o", "retail-tool-calling", "retail-with-preconditions")
KEY = "bench-pseudonym-key-0123456789abcdef0123456789abcdef"
TARGET = 2.0


def write_records(out: Path, count: int) -> int:
    """The first ``count`` vendored runs as one JSON array file; how many were written."""
    records: list = []
    for name in RUN_FILES:
        records.extend(json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes())))
        if len(records) >= count:
            break
    records = records[:count]
    out.write_text(json.dumps(records))
    return len(records)


def published_stats(store: Path) -> dict:
    (set_dir,) = [p for p in store.iterdir() if p.is_dir()]
    (manifest,) = sorted(set_dir.glob("versions/*/manifest.json"))
    return json.loads(manifest.read_text())["stats"]


def one_run(source: Path, mode: str, scratch: Path) -> tuple[float, float, dict]:
    """Wall seconds of a cold `golden run`, its summed stage seconds, its stage seconds."""
    local = mode == "local"
    run_dir = Path(tempfile.mkdtemp(prefix="small-", dir=scratch))
    store = run_dir / "store"
    env = {
        **os.environ,
        "GOLDEN_PSEUDONYM_KEY": KEY,
        "PREFECT_HOME": str(run_dir / "prefect"),
        # default: the bench's own cache folder, so after the first run the temporary API
        # starts from the migrated database template (flows/prefect_db.py); nocache: an empty
        # one per run, so Prefect migrates a new database as it did before the template
        "XDG_CACHE_HOME": str(run_dir / "cache" if mode == "nocache" else scratch / "cache"),
    }
    cmd = [
        sys.executable, "-m", "golden_distill.flows.cli", "run",
        "--config", str(REPO / "configs" / "tau-bench.yaml"), "--source", str(source),
        "--store", str(store), "--set", "small", "--work-dir", str(run_dir / "work"),
        *(["--local"] if local else []),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"golden run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    stages = published_stats(store).get("stage_seconds") or {}
    # the manifest is written inside `publish`, so that stage is recorded only as its first
    # part, `gather`; were `publish` ever recorded, `gather` would be inside it
    summed = sum(v for k, v in stages.items() if not (k == "gather" and "publish" in stages))
    return wall, summed, stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=1, help="runs per mode (median shown)")
    parser.add_argument(
        "--modes",
        default="local,default,nocache",
        help="comma-separated: local (--local), default (temporary API, database template "
        "kept in the bench's cache after the first run), nocache (temporary API, empty cache "
        "per run: Prefect migrates a new database)",
    )
    parser.add_argument("--dir", default=tempfile.gettempdir())
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-small-", dir=args.dir))
    source = scratch / "tau-bench.json"
    n = write_records(source, args.records)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    print(f"{n} tau-bench records, configs/tau-bench.yaml, cold work folder per run")
    found: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
    for i in range(args.repeat):
        for mode in modes:
            load = os.getloadavg()[0]
            wall, summed, stages = one_run(source, mode, scratch)
            found[mode].append((wall, summed))
            shown = ", ".join(f"{k} {v:.2f}" for k, v in stages.items())
            print(
                f"  [{i + 1}] {mode:<8} wall {wall:5.2f} s, stages {summed:5.2f} s "
                f"-> {wall / summed:.2f}x (load {load:.1f}; {shown})",
                flush=True,
            )
    print()
    for mode, runs in found.items():
        wall = statistics.median(w for w, _ in runs)
        summed = statistics.median(s for _, s in runs)
        ratio = statistics.median(w / s for w, s in runs)
        target = f"(target <= {TARGET:.0f}x)" if mode == "local" else "(reference)"
        print(
            f"{mode:<8} median wall {wall:5.2f} s / summed stages {summed:5.2f} s "
            f"= {ratio:.2f}x {target}"
        )
    print(f"load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
