"""Benchmark: the replay harness's own overhead, against a plain dict-lookup loop.

    .venv/bin/python bench/replay.py                    # 100k generated sessions (recorded)
    .venv/bin/python bench/replay.py --sessions 20000   # smaller, on a busy machine

Builds a golden set from generated sessions (generate -> ingest -> publish), loads its cases into
memory (reading is measured elsewhere: bench/publish.py), then replays every case in one process
(per core) twice with the same re-issuing agent (no model): once through the harness (virtual
tool stubs with the two-stage match, frozen clock, seeded randomness, three assertion layers,
gate) and once calling a plain dict lookup (recorded responses by tool name + canonical
arguments, built per case). Prints cases/s for both and the ratio; target: <= 3x.
"""

from __future__ import annotations

import argparse
import gc
import operator
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import AgentResult, ReplayConfig, replay_cases
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.replay.contract import BaselineCall, ReplayInput
from golden_distill.datasets.store.publish import publish_version
from golden_distill.synthetic import generate_corpus

TARGET = 3.0
_seq = operator.attrgetter("seq")


def build_set(work: Path, sessions: int) -> tuple[str, str]:
    t0 = time.perf_counter()
    generate_corpus(work / "corpus", sessions=sessions, seed=5, shards=2, compress=None)
    summary = ingest([str(work / "corpus")], work / "canonical")
    table = pa.concat_tables([pq.read_table(p) for p in summary.shards])
    version = publish_version(str(work / "store"), "bench", cases=table).version
    print(f"built the set: {table.num_rows} cases in {time.perf_counter() - t0:.1f} s")
    return str(work / "store"), f"bench@{version}"


class DictTools:
    """The baseline: recorded responses by (tool, canonical arguments), nth call nth answer."""

    def __init__(self, steps: list[Step], calls: tuple[BaselineCall, ...]) -> None:
        self.answers: dict[tuple[str, bytes], list[Step]] = {}
        for step, call in zip(steps, calls, strict=True):
            key = (call.name, orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS))
            self.answers.setdefault(key, []).append(step)

    def call(self, name: str, arguments: Any = None) -> Any:
        key = (name, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS))
        step = self.answers[key].pop(0)
        return orjson.loads(step.response) if step.response else None


def baseline(cases: list[Case]) -> None:
    """The same agent on the same inputs (each recorded call's arguments parsed once, for the
    agent's input and the lookup keys alike), every call served by one dict lookup; the cyclic
    GC paused as the harness pauses it."""
    gc.disable()
    try:
        _baseline(cases)
    finally:
        gc.enable()


def _baseline(cases: list[Case]) -> None:
    for case in cases:
        steps = sorted(case.steps, key=_seq)
        calls = tuple(
            BaselineCall(s.seq, s.name, orjson.loads(s.arguments) if s.arguments else None, False)
            for s in steps
        )
        result = reissue(ReplayInput.from_case(case, calls), DictTools(steps, calls))
        assert isinstance(result, AgentResult)


def timed(
    runs: dict[str, Callable[[], Any]], n: int, rounds: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Best-of-``rounds`` cases/s per contender, wall clock and this process's CPU time, the
    contenders alternating (a shared machine's load then hits both alike; CPU time leaves out
    the time other processes held the core)."""
    best = dict.fromkeys(runs, float("inf"))
    best_cpu = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for label, fn in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            best[label] = min(best[label], time.perf_counter() - t0)
            best_cpu[label] = min(best_cpu[label], time.process_time() - c0)
            gc.collect()  # the previous contender's garbage is not the next one's cost
    for label, seconds in best.items():
        print(
            f"{label}: {n} cases in {seconds:.2f} s = {n / seconds:,.0f} cases/s wall, "
            f"{n / best_cpu[label]:,.0f} cases/s CPU (best of {rounds})"
        )
    return (
        {label: n / seconds for label, seconds in best.items()},
        {label: n / seconds for label, seconds in best_cpu.items()},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="golden-bench-replay-"))
    try:
        store, ref = build_set(work, args.sessions)
        golden = open_set(store, ref)
        cases = [c.case for c in golden.cases()]
        steps = sum(len(c.steps) for c in cases)
        print(f"{len(cases)} cases, {steps} recorded steps in memory")
        config = ReplayConfig()

        def harness() -> None:
            run = replay_cases(
                cases, reissue, config, baseline_version=ref, volatile_keys=golden.volatile_keys
            )
            assert run.gate.verdict == "pass", run.figures
            assert not any(r.check.diffs for r in run.runs)

        rates, cpu_rates = timed(
            {"plain dict lookup (baseline)": lambda: baseline(cases), "replay harness": harness},
            len(cases),
            args.rounds,
        )
        ratio = rates["plain dict lookup (baseline)"] / rates["replay harness"]
        cpu_ratio = cpu_rates["plain dict lookup (baseline)"] / cpu_rates["replay harness"]
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(f"harness costs {ratio:.2f}x the plain loop ({verdict} the <= {TARGET}x target); "
              f"{cpu_ratio:.2f}x in CPU time; load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
