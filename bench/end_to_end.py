"""End to end: generated sessions through the whole `distill` flow, then the cached rerun.

    .venv/bin/python bench/end_to_end.py                     # 100,000 sessions (the named size)
    .venv/bin/python bench/end_to_end.py --sessions 1000000  # the 1M target
    .venv/bin/python bench/end_to_end.py --sessions 5000 --runner process

Runs `golden run` twice in a child process on the same corpus (generated once, not timed): the
first run computes every shard, the second finds nothing changed and takes every shard from the
cache. Prints the wall time of each, the share of each stage (from the manifest the run
published), the peak RSS of the whole process tree (flow, Prefect's ephemeral server, pool or
Dask workers), its CPU time and the hypervisor's steal (the same commit on the same corpus
does the same work: more CPU seconds means a slower host at that moment), the cores busy in
each phase of the first run (``core_use.py``: where a core idles), two fixed pieces of CPU work
timed before and after it (``host_probe.py``, a small loop and default Presidio on fixed texts:
this host's speed at that hour), and the rerun's
time as a fraction of the first run (the baseline, measured in the same invocation). Targets: rerun
<= 10% of the first run; 1M sessions in <= 8 min with RSS <= 3 GB on a 2-core machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from core_use import CoreUse, machine_cpu_seconds
from host_probe import presidio_seconds_in_child, probe_seconds

REPO = Path(__file__).resolve().parent.parent
KEY = "bench-pseudonym-key-0123456789abcdef0123456789abcdef"


def memory(size: int) -> str:
    """A byte count in both units people read "GB" as: GiB (2^30, what this benchmark printed
    as "GB" before 2026-12-02) and GB (10^9)."""
    return f"{size / 2**30:.2f} GiB ({size / 1e9:.2f} GB)"


def role(proc: psutil.Process, root: int) -> str:
    """What a process of the run's tree is: the flow, Prefect's API, a worker, or other."""
    if proc.pid == root:
        return "flow"
    try:
        cmd = " ".join(proc.cmdline())
    except psutil.Error:
        return "other"
    if "resource_tracker" in cmd:
        return "other"
    if "uvicorn" in cmd or ("prefect" in cmd and "server" in cmd):
        return "api"
    if "multiprocessing" in cmd or "distributed" in cmd or "dask" in cmd:
        return "workers"
    return "other"


class TreeRss:
    """Peak RSS of a run's process tree, in total and per role (flow / workers / API), and
    the flow's own peak while workers run (shard, redact phases) and while none do (select,
    dedup, publish)."""

    ROLES = ("flow", "workers", "api", "other")

    def __init__(self, root: int) -> None:
        self.root = psutil.Process(root)
        self.peak, self.detail = 0, ""
        self.role_peak = dict.fromkeys(self.ROLES, 0)
        self.one_worker_peak = 0
        self.flow_with_workers = self.flow_alone = 0
        self._roles: dict[int, str] = {}

    def sample(self) -> None:
        by_role = dict.fromkeys(self.ROLES, 0)
        workers = []
        for p in [self.root, *self.root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                rss = p.memory_info().rss
                name = self._roles.get(p.pid) or self._roles.setdefault(
                    p.pid, role(p, self.root.pid)
                )
                by_role[name] += rss
                if name == "workers":
                    workers.append(rss)
        total = sum(by_role.values())
        for name, rss in by_role.items():
            self.role_peak[name] = max(self.role_peak[name], rss)
        self.one_worker_peak = max([self.one_worker_peak, *workers])
        if workers:
            self.flow_with_workers = max(self.flow_with_workers, by_role["flow"])
        else:
            self.flow_alone = max(self.flow_alone, by_role["flow"])
        if total > self.peak:
            self.peak = total
            self.detail = ", ".join(f"{k} {v / 2**30:.2f}" for k, v in by_role.items() if v)

    def report(self) -> str:
        gb = 2**30
        peaks = ", ".join(f"{k} {v / gb:.2f}" for k, v in self.role_peak.items() if v)
        return (
            f"  peak RSS {memory(self.peak)} (process tree; at that moment: {self.detail})\n"
            f"  per-role peaks (GiB): {peaks}; "
            f"largest single worker {self.one_worker_peak / gb:.2f}"
            f"\n  flow process: {self.flow_with_workers / gb:.2f} GiB while workers run "
            f"(shards, redact), {self.flow_alone / gb:.2f} GiB without (select, dedup, publish)"
        )


def machine_steal_seconds() -> float | None:
    """CPU time the hypervisor gave other guests, summed over this machine's cores (Linux
    ``/proc/stat``; None elsewhere)."""
    cpu = machine_cpu_seconds()
    return None if cpu is None else cpu["steal"]


def cpu_report(before: resource.struct_rusage, wall: float, steal: float | None) -> str:
    """The run's CPU time (its process tree: every process it waited for) against the cores
    the machine has. Same code, same corpus: the same work, so more CPU seconds than another
    run means a slower host at that moment (a busy neighbour), not slower code."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    cores = os.cpu_count() or 1
    line = (
        f"  CPU time {user + system:.1f} s (user {user:.1f}, system {system:.1f}): "
        f"{(user + system) / max(wall, 1e-9):.2f} of {cores} cores busy on average"
    )
    after_steal = machine_steal_seconds()
    if steal is not None and after_steal is not None:
        line += f"; hypervisor steal {after_steal - steal:.1f} s"
    return line


def timed_run(
    args: list[str], env: dict[str, str], cores: CoreUse | None = None
) -> tuple[float, int, str]:
    """Wall seconds, peak RSS of the process tree (sampled every 0.2 s), stdout; prints the
    tree's peak memory and CPU time. ``cores``: sampled as often, for its report by phase."""
    usage, steal = resource.getrusage(resource.RUSAGE_CHILDREN), machine_steal_seconds()
    started = time.perf_counter()
    child = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    rss = TreeRss(child.pid)
    # drain both pipes while sampling, so a full pipe never stalls the run
    out_lines: list[str] = []
    err_lines: list[str] = []
    drains = [
        threading.Thread(target=lines.extend, args=(pipe,), daemon=True)
        for lines, pipe in ((out_lines, child.stdout), (err_lines, child.stderr))
    ]
    for drain in drains:
        drain.start()
    while child.poll() is None:
        with contextlib.suppress(psutil.Error):
            rss.sample()
        if cores is not None:
            cores.sample()
        time.sleep(0.2)
    print(rss.report(), flush=True)
    for drain in drains:
        drain.join(timeout=30)
    out, err = "".join(out_lines), "".join(err_lines)
    seconds = time.perf_counter() - started
    print(cpu_report(usage, seconds, steal), flush=True)
    if child.returncode != 0:
        sys.exit(f"golden run failed ({child.returncode}):\n{err[-3000:]}")
    return seconds, rss.peak, out


def unchanged(out: str) -> bool:
    """The rerun found nothing changed: the flow's log line, or `golden run`'s run-key
    pre-check (it answers before Prefect starts)."""
    return "not republished" in out or "nothing new to publish" in out


def published_manifest(store: Path, out: str) -> dict:
    version = next(
        line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("published version")
    )
    (set_dir,) = [p for p in store.iterdir() if p.is_dir()]
    return json.loads((set_dir / "versions" / version / "manifest.json").read_text())


def start_server(env: dict[str, str], run_dir: Path) -> subprocess.Popen:
    """`prefect server start` on a free loopback port; sets PREFECT_API_URL in ``env``."""
    import socket

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port",
         str(port)],
        env={**env, "PREFECT_UI_ENABLED": "false"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    env["PREFECT_API_URL"] = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{env['PREFECT_API_URL']}/health", timeout=2).status_code == 200:
                return server
        time.sleep(0.5)
    server.kill()
    sys.exit("prefect server did not start")


def ensure_corpus(base: Path, sessions: int, shards: int) -> Path:
    """The generated corpus of ``sessions`` sessions under ``base``, made once (not timed) and
    reused by later invocations (the same seed builds the same corpus)."""
    corpus = base / f"corpus-{sessions}"
    if not (corpus / "_truth.json").exists():
        from golden_distill.synthetic import generate_corpus

        shutil.rmtree(corpus, ignore_errors=True)
        t0 = time.perf_counter()
        generate_corpus(corpus, sessions=sessions, seed=7, shards=shards)
        print(f"generated {sessions:,} sessions in {time.perf_counter() - t0:.1f} s (not timed)")
    return corpus


def write_run_config(
    run_dir: Path, runner: str, parallel: int, shipped: Path = REPO / "configs" / "nightly.yaml"
) -> Path:
    """``shipped`` (a checkout's nightly config) with only its run section replaced: this
    runner, ``parallel`` shards at once, the work folder inside ``run_dir``."""
    import yaml

    config = yaml.safe_load(shipped.read_text())
    config["run"] = {
        "task_runner": runner,
        "max_parallel_shards": parallel,
        "dask_workers": parallel,
        "work_dir": str(run_dir / "work"),
    }
    path = run_dir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run_command(config: Path, corpus: Path, store: Path) -> list[str]:
    """`golden run` of ``corpus`` into the set `bench` of ``store``, as a module of whichever
    `golden_distill` the child's environment imports."""
    return [
        sys.executable, "-m", "golden_distill.flows.cli", "run", "--config", str(config),
        "--source", str(corpus), "--format", "native", "--store", str(store), "--set", "bench",
    ]  # fmt: skip


def run_env(run_dir: Path) -> dict[str, str]:
    """The environment of a measured run: the bench's pseudonym key, Prefect's home in
    ``run_dir`` (its own temporary API database)."""
    return {**os.environ, "GOLDEN_PSEUDONYM_KEY": KEY, "PREFECT_HOME": str(run_dir / "prefect")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=0, help="input files (default: 1 per 10k)")
    parser.add_argument("--runner", choices=["thread", "process", "dask"], default="thread")
    parser.add_argument("--parallel", type=int, default=2, help="shards at once")
    parser.add_argument("--dir", default=str(REPO / "bench" / "out" / "end_to_end"))
    parser.add_argument("--keep", action="store_true", help="keep the work folder and store")
    parser.add_argument(
        "--server",
        action="store_true",
        help="run both runs against one `prefect server start` (as a deployment does) instead of "
        "the temporary API each `golden run` boots; its RSS is not counted",
    )
    parser.add_argument(
        "--base-cases",
        type=int,
        default=0,
        help="incremental night: first publish a set of this many cases, then compare a run "
        "of the corpus (one night) growing it with a first run of the same night alone",
    )
    args = parser.parse_args()

    base = Path(args.dir)
    shards = args.shards or max(2, args.sessions // 10_000)
    corpus = ensure_corpus(base, args.sessions, shards)
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=base))
    config = write_run_config(run_dir, args.runner, args.parallel)
    store = run_dir / "store"
    env = run_env(run_dir)
    cmd = run_command(config, corpus, store)

    if args.base_cases:
        incremental(args, cmd, env, config, store, run_dir)
        return
    server = start_server(env, run_dir) if args.server else None
    try:
        cores = CoreUse()
        before = probe_seconds(), presidio_seconds_in_child()
        first_s, first_rss, out = timed_run(cmd, env, cores)
        after = probe_seconds(), presidio_seconds_in_child()
        print(
            "  host probes (host_probe.py, the same work each time; more = a slower host): "
            f"loop {before[0]:.2f} s of CPU before the first run, {after[0]:.2f} s after; "
            f"Presidio {before[1]:.2f} s before, {after[1]:.2f} s after",
            flush=True,
        )
        phases = cores.report(run_dir / "prefect" / "prefect.db")  # before the rerun's tasks
        if phases and not args.server:
            print(phases, flush=True)
        manifest = published_manifest(store, out)
        rerun_s, rerun_rss, rerun_out = timed_run(cmd, env)  # nothing changed: all from cache
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    assert unchanged(rerun_out), "the rerun should find nothing changed"
    stats = manifest.get("stats", {})

    stages = stats.get("stage_seconds", {})
    flow_s = sum(stages.values())
    api = "running prefect server" if args.server else "temporary API per run"
    print(
        f"\n== end to end: {args.sessions:,} sessions, {shards} shards, runner={args.runner}, {api}"
    )
    read, cands, pub = (stats.get(k, 0) for k in ("records_read", "candidates", "published"))
    print(f"records read {read:,}; candidates {cands:,}; published {pub:,}")
    print(
        f"first run:  {first_s:8.1f} s wall  (flow body {flow_s:.1f} s), "
        f"peak RSS {memory(first_rss)}"
    )
    for name, sec in sorted(stages.items(), key=lambda kv: -kv[1]):
        print(f"    {name:14s} {sec:8.1f} s  {100 * sec / max(flow_s, 1e-9):5.1f} %")
    task_s = stats.get("shard_task_seconds", {})
    if task_s:
        total = sum(task_s.values()) + float(stats.get("redact_task_seconds", 0))
        print("  task time inside shard/redact tasks (summed over workers):")
        for name, sec in sorted(task_s.items(), key=lambda kv: -kv[1]):
            print(f"    {name:14s} {sec:8.1f} s  {100 * sec / max(total, 1e-9):5.1f} %")
        red = float(stats.get("redact_task_seconds", 0))
        print(f"    {'redact tasks':14s} {red:8.1f} s  {100 * red / max(total, 1e-9):5.1f} %")
    print(f"cached rerun: {rerun_s:8.1f} s wall, peak RSS {memory(rerun_rss)}")
    print(
        f"rerun / first run (baseline, same invocation): {rerun_s / first_s:.3f}  (target <= 0.10)"
    )
    print(f"throughput: {args.sessions / first_s:,.0f} sessions/s first run")
    if not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)


NIGHT = ["--since", "2026-11-01", "--until", "2026-12-01"]  # the generator's recording dates


def publish_base_set(store: Path, config: Path, cases: int, parts: Path) -> None:
    """A set of ``cases`` synthetic cases made with this config, as the night's parent."""
    sys.path.insert(0, str(REPO / "bench"))
    from publish_rss import write_parts

    from golden_distill.datasets.store.publish import publish_version
    from golden_distill.flows.caching import shard_config_sha256
    from golden_distill.flows.config import load_pipeline_config

    write_parts(parts, cases)
    loaded = load_pipeline_config(config)
    publish_version(
        str(store),
        "bench",
        cases=sorted(parts.glob("part-*.parquet")),
        manifest_fields={
            "config": loaded.model_dump(mode="json"),
            "stats": {"shard_config_sha256": shard_config_sha256(loaded)},
            "lineage": {"until": "2026-11-01T00:00:00+00:00"},
        },
    )
    shutil.rmtree(parts, ignore_errors=True)


def incremental(args, cmd, env, config, store, run_dir) -> None:
    """The incremental night vs a first run over the same night alone (same invocation)."""
    t0 = time.perf_counter()
    publish_base_set(store, config, args.base_cases, run_dir / "base-parts")
    print(f"published a base set of {args.base_cases:,} cases in "
          f"{time.perf_counter() - t0:.1f} s (not timed)")  # fmt: skip
    first_cmd = [*cmd[:-1], "first", *NIGHT, "--work-dir", str(run_dir / "work-first")]
    grow_cmd = [*cmd, *NIGHT, "--work-dir", str(run_dir / "work-grow")]
    first_s, first_rss, _ = timed_run(first_cmd, env)
    grow_s, grow_rss, out = timed_run(grow_cmd, env)
    rerun_s, _, rerun_out = timed_run(grow_cmd, env)
    manifest = published_manifest_of(store / "bench", out)
    inc = manifest.get("stats", {}).get("incremental", {})
    print(f"\n== incremental night: {args.sessions:,} sessions onto {args.base_cases:,} cases")
    published = manifest["counts"]["cases"]
    print(
        f"carried {inc.get('carried', 0):,}; new representatives "
        f"{inc.get('new_representatives', 0):,}; joined clusters "
        f"{inc.get('joined_existing_clusters', 0):,}; published {published:,}"
    )
    print(f"first run over the night alone (baseline): {first_s:8.1f} s, RSS {memory(first_rss)}")
    print(f"incremental night onto the set:            {grow_s:8.1f} s, RSS {memory(grow_rss)}")
    print(f"incremental / first run: {grow_s / first_s:.2f}  (target <= 1.5)")
    assert unchanged(rerun_out)
    print(
        f"unchanged rerun: {rerun_s:.1f} s = {rerun_s / grow_s:.3f} of the night (target <= 0.10)"
    )
    if not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)


def published_manifest_of(set_dir: Path, out: str) -> dict:
    version = next(
        line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("published version")
    )
    return json.loads((set_dir / "versions" / version / "manifest.json").read_text())


if __name__ == "__main__":
    main()
