"""End to end, two commits in one invocation: is this checkout slower than the commit before it?

    .venv/bin/python bench/compare_commits.py --sessions 2000 --baseline HEAD~3   # a quick check
    .venv/bin/python bench/compare_commits.py                                     # 100k vs HEAD~1
    .venv/bin/python bench/compare_commits.py --sessions 1000000
    .venv/bin/python bench/compare_commits.py --sessions 2000000                   # RSS judged

A change to how the pipeline runs is judged against the code it replaces on the same machine at
the same hour, because this project's hosts drift: the same commit on the same corpus has run
1.7x apart within an hour. So both sides run here, alternating, on one corpus:

- the baseline (``--baseline``, any git revision; default ``HEAD~1``, the commit before this one)
  is checked out as a detached git worktree under ``bench/out/compare/`` (kept and reused) and
  imported from there: a folder of links named ``golden_distill/<folder>`` (one per entry of the
  baseline's own ``package-dir`` in pyproject.toml) goes first on ``PYTHONPATH``. The editable
  install's finder sits after Python's path finder, so the links win for the baseline's
  processes and every process they start; both sides share this venv's third-party packages;
- the candidate is this checkout as it stands (uncommitted edits included), or ``--candidate REV``.

Before timing, each side's ``golden_distill.flows`` is imported in a child and must come from
its own checkout; then each side's code is compiled and its CLI imported once (untimed), so a
fresh worktree's first run pays no bytecode compilation. The corpus is generated once (not
timed; shared with ``bench/end_to_end.py``). Each measurement is ``bench/end_to_end.py``'s:
``golden run`` in a child process with its own Prefect home and store, the tree's peak RSS
sampled every 0.2 s, then the cached rerun. Each side runs with its own ``configs/nightly.yaml``
(only the run section replaced; the runner is ``process``, the shipped one, unless ``--runner``
says otherwise).

Judged, on the median of ``--repeat`` runs per side (ratios only; absolute seconds are printed
for scale): first-run wall candidate / baseline <= 1.1; the candidate's cached rerun <= 10% of
its first run; at 2M sessions or more, the candidate's peak RSS <= 2 GB (2e9 bytes). CPU seconds
candidate / baseline is printed beside the wall ratio (the same work on a drifting host).
Exits 0 whatever the verdict (a measurement); ``--strict`` exits 1 on a FAIL.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from end_to_end import (
    REPO,
    ensure_corpus,
    memory,
    run_command,
    run_env,
    timed_run,
    unchanged,
    write_run_config,
)
from host_probe import probe_seconds

#: The issue's limits: first-run wall candidate / baseline, cached rerun / first run, peak RSS.
WALL_RATIO_MAX = 1.10
RERUN_SHARE_MAX = 0.10
RSS_MAX_BYTES = 2_000_000_000  # "2 GB" read as 10^9 bytes, the stricter of the two readings
RSS_JUDGED_FROM_SESSIONS = 2_000_000  # the RSS limit is stated for the 2M run


@dataclass(frozen=True)
class Side:
    """One contender: a name, the commit or checkout it is, where its code lives, and what its
    processes' environment adds (``PYTHONPATH`` for a baseline worktree)."""

    name: str
    label: str
    root: Path
    env: dict[str, str]


@dataclass(frozen=True)
class Phase:
    """One `golden run`: wall seconds, CPU seconds of its process tree, peak RSS of that tree."""

    wall: float
    cpu: float
    rss: int


@dataclass(frozen=True)
class Measurement:
    """A first run and its cached rerun on the same corpus and store."""

    first: Phase
    rerun: Phase

    @property
    def rerun_share(self) -> float:
        return self.rerun.wall / max(self.first.wall, 1e-9)


@dataclass(frozen=True)
class Check:
    """One threshold: the figure, its limit, and whether it held (None: not judged at this
    size)."""

    name: str
    value: float
    limit: float
    passed: bool | None

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "FAIL", None: "n/a"}[self.passed]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def resolve(repo: Path, rev: str) -> str:
    """The full commit id ``rev`` names in ``repo`` (a clear error if it names none)."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        sys.exit(f"--baseline/--candidate {rev!r} names no commit in {repo}")


def checkout(repo: Path, rev: str, out: Path) -> Path:
    """A detached worktree of ``rev`` at ``out/<commit>/src``: reused when it is already there
    at that commit, (re)made otherwise. Returns its folder."""
    sha = resolve(repo, rev)
    dest = out / sha[:12] / "src"
    if (dest / ".git").exists() and git(dest, "rev-parse", "HEAD") == sha:
        return dest
    if dest.exists():  # another commit checked out there by hand, or not a worktree at all
        with contextlib.suppress(subprocess.CalledProcessError):
            git(repo, "worktree", "remove", "--force", str(dest))
        shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # -f: a worktree registered at this path whose folder was deleted is taken over
    git(repo, "worktree", "add", "-f", "--detach", str(dest), sha)
    return dest


def package_dirs(src: Path) -> dict[str, str]:
    """``src``'s own map of import names to folders (``[tool.setuptools] package-dir``)."""
    mapping = tomllib.loads((src / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = mapping.get("package-dir", {})
    if not mapping:
        sys.exit(f"{src}/pyproject.toml maps no package folders ([tool.setuptools] package-dir)")
    return mapping


def import_links(src: Path) -> Path:
    """A folder that, first on ``PYTHONPATH``, makes ``golden_distill.<x>`` import ``src``'s
    code: ``golden_distill/<x>`` links to the folder ``src``'s pyproject.toml maps it to."""
    links = src.parent / "import"
    shutil.rmtree(links, ignore_errors=True)
    for package, folder in package_dirs(src).items():
        link = links.joinpath(*package.split("."))
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(src / folder, target_is_directory=True)
    return links


def side_of(repo: Path, rev: str | None, name: str, out: Path) -> Side:
    """This checkout (``rev`` None) or a worktree of ``rev`` imported through its links."""
    if rev is None:
        edits = " + uncommitted edits" if git(repo, "status", "--porcelain") else ""
        return Side(
            name, f"this checkout ({git(repo, 'rev-parse', '--short', 'HEAD')}{edits})", repo, {}
        )
    src = checkout(repo, rev, out)
    path = os.pathsep.join(p for p in (str(import_links(src)), os.environ.get("PYTHONPATH")) if p)
    label = f"{rev} = {git(src, 'log', '-1', '--format=%h %s')[:70]}"
    return Side(name, label, src, {"PYTHONPATH": path})


def imported_from(env: dict[str, str]) -> Path:
    """Where a child process with ``env`` imports ``golden_distill.flows`` from (links
    resolved)."""
    out = subprocess.run(
        [sys.executable, "-c", "import golden_distill.flows as m; print(m.__file__)"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),  # not a checkout: the current folder must not decide
    ).stdout.strip()
    return Path(out).resolve()


def check_imports(side: Side) -> None:
    found = imported_from({**os.environ, **side.env})
    if not found.is_relative_to(side.root.resolve()):
        sys.exit(f"{side.name} imports golden_distill.flows from {found}, not from {side.root}")
    print(f"{side.name}: {side.label}\n  imports {found}")


def warm_up(side: Side) -> None:
    """Untimed: compile ``side``'s code and import its CLI once, so neither side's first run
    pays for bytecode compilation or for reading the code from a cold disk. A fresh baseline
    worktree has no ``__pycache__``: without this, a run of one commit against itself came out
    0.67x on wall at 2,000 sessions."""
    folders = [str(side.root / folder) for folder in package_dirs(side.root).values()]
    env = {**os.environ, **side.env}
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], env=env, check=True)
    subprocess.run(
        [sys.executable, "-c", "import golden_distill.flows.cli, golden_distill.flows.distill"],
        env=env,
        check=True,
        cwd=tempfile.gettempdir(),
    )


def timed(cmd: list[str], env: dict[str, str]) -> tuple[Phase, str]:
    """``bench/end_to_end.py``'s timed run, with the CPU seconds of the process tree kept."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, rss, out = timed_run(cmd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Phase(wall, cpu, rss), out


def measure(side: Side, corpus: Path, base: Path, args: argparse.Namespace) -> Measurement:
    """A first run and the cached rerun of ``side`` on ``corpus``, in a fresh run folder."""
    run_dir = Path(tempfile.mkdtemp(prefix=f"run-{side.name}-", dir=base))
    config = write_run_config(
        run_dir, args.runner, args.parallel, side.root / "configs" / "nightly.yaml"
    )
    env = {**run_env(run_dir), **side.env}
    cmd = run_command(config, corpus, run_dir / "store")
    print(f"-- {side.name}: first run", flush=True)
    first, _ = timed(cmd, env)
    print(f"-- {side.name}: cached rerun", flush=True)
    rerun, out = timed(cmd, env)
    if not unchanged(out):
        sys.exit(f"{side.name}: the rerun found something changed; it is not a cached rerun")
    if not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    return Measurement(first, rerun)


def median_of(runs: list[Measurement]) -> Measurement:
    """Per figure, the median over the runs (each figure on its own)."""

    def med(get) -> float:
        return statistics.median(get(r) for r in runs)

    def phase(pick) -> Phase:
        return Phase(
            med(lambda r: pick(r).wall), med(lambda r: pick(r).cpu), int(med(lambda r: pick(r).rss))
        )

    return Measurement(phase(lambda r: r.first), phase(lambda r: r.rerun))


def verdict(baseline: Measurement, candidate: Measurement, sessions: int) -> list[Check]:
    """The issue's thresholds on the candidate against the baseline (medians)."""
    wall = candidate.first.wall / max(baseline.first.wall, 1e-9)
    rss = max(candidate.first.rss, candidate.rerun.rss)
    judged = sessions >= RSS_JUDGED_FROM_SESSIONS
    return [
        Check("first-run wall, candidate / baseline", wall, WALL_RATIO_MAX, wall <= WALL_RATIO_MAX),
        Check(
            "candidate cached rerun / its first run",
            candidate.rerun_share,
            RERUN_SHARE_MAX,
            candidate.rerun_share <= RERUN_SHARE_MAX,
        ),
        Check(
            "candidate peak RSS, bytes (judged at 2M sessions)",
            rss,
            RSS_MAX_BYTES,
            rss <= RSS_MAX_BYTES if judged else None,
        ),
    ]


def exit_code(checks: list[Check], strict: bool) -> int:
    """0 for a measurement whatever it found; with ``strict``, 1 when a judged check failed."""
    return 1 if strict and any(check.passed is False for check in checks) else 0


def summary(name: str, runs: list[Measurement]) -> str:
    m = median_of(runs)
    each = ", ".join(f"{r.first.wall:.1f}" for r in runs)
    return (
        f"{name}: first run {m.first.wall:7.1f} s wall, {m.first.cpu:7.1f} s CPU, "
        f"peak RSS {memory(m.first.rss)}  (first-run walls: {each})\n"
        f"{'':{len(name)}}  cached rerun {m.rerun.wall:5.1f} s wall, {m.rerun.cpu:5.1f} s CPU, "
        f"peak RSS {memory(m.rerun.rss)}; {m.rerun_share:.3f} of the first run"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD~1", help="any git revision (default HEAD~1)")
    parser.add_argument(
        "--candidate", default=None, help="a git revision (default: this checkout as it stands)"
    )
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=0, help="input files (default: 1 per 10k)")
    parser.add_argument(
        "--runner",
        choices=["thread", "process", "dask"],
        default="process",
        help="the task runner of both sides (default: process, the one configs/nightly.yaml ships)",
    )
    parser.add_argument("--parallel", type=int, default=2, help="shards at once")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side, alternating")
    parser.add_argument("--dir", default=str(REPO / "bench" / "out"))
    parser.add_argument("--keep", action="store_true", help="keep the run folders and stores")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a threshold fails")
    args = parser.parse_args()

    out = Path(args.dir)
    baseline = side_of(REPO, args.baseline, "baseline", out / "compare")
    candidate = side_of(REPO, args.candidate, "candidate", out / "compare")
    for side in (baseline, candidate):
        check_imports(side)
        warm_up(side)
    base = out / "end_to_end"  # the corpus is shared with bench/end_to_end.py
    shards = args.shards or max(2, args.sessions // 10_000)
    corpus = ensure_corpus(base, args.sessions, shards)

    runs: dict[str, list[Measurement]] = {"baseline": [], "candidate": []}
    probes = [probe_seconds()]
    for i in range(args.repeat):
        # baseline first, then candidate first: a host drifting one way weighs on both
        order = (baseline, candidate) if i % 2 == 0 else (candidate, baseline)
        for side in order:
            print(f"\n== repeat {i + 1}/{args.repeat}: {side.name}", flush=True)
            runs[side.name].append(measure(side, corpus, base, args))
    probes.append(probe_seconds())

    b, c = median_of(runs["baseline"]), median_of(runs["candidate"])
    print(
        f"\n== compare commits: {args.sessions:,} sessions, {shards} shards, "
        f"runner={args.runner}, {args.repeat} run(s) per side (medians)"
    )
    print(f"baseline  = {baseline.label}\ncandidate = {candidate.label}")
    print(summary("baseline ", runs["baseline"]))
    print(summary("candidate", runs["candidate"]))
    print(
        f"host probe (host_probe.py loop, more = a slower host): {probes[0]:.2f} s CPU before, "
        f"{probes[1]:.2f} s after"
    )
    print(
        f"candidate / baseline: first-run wall {c.first.wall / max(b.first.wall, 1e-9):.3f}, "
        f"CPU {c.first.cpu / max(b.first.cpu, 1e-9):.3f}, "
        f"peak RSS {c.first.rss / max(b.first.rss, 1):.3f}"
    )
    checks = verdict(b, c, args.sessions)
    for check in checks:
        if check.limit == RSS_MAX_BYTES:
            figure = f"{memory(int(check.value))} (limit {check.limit / 1e9:.0f} GB)"
        else:
            figure = f"{check.value:.3f} (limit {check.limit:.2f})"
        print(f"  {check.verdict:4s}  {check.name}: {figure}")
    return exit_code(checks, args.strict)


if __name__ == "__main__":
    sys.exit(main())
