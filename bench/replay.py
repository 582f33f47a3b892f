"""Benchmark: the replay harness's own overhead, against a plain dict-lookup loop.

    .venv/bin/python bench/replay.py                    # 100k generated sessions (recorded)
    .venv/bin/python bench/replay.py --sessions 5000    # smaller, on a busy machine

Builds a golden set from generated sessions (generate -> ingest -> publish), loads its cases into
memory (reading is measured elsewhere: bench/publish.py) and gives each case two recorded model
steps (a plan before its first tool call, an answer after its last, with tokens), so every
boundary kind is served. Then, in one process, all in the same run:

1. a full replay with the re-issuing agent (every model step through ``tools.llm.complete``,
   every tool call through the stubs: two-stage match, write sandbox, frozen clock, seeded
   randomness, every registered check, gate; zero model calls) against the same agent over a
   plain loop serving the same calls from dicts (tool responses by name + canonical arguments,
   model responses in order). Target: <= 3x.
2. ``--repeat 10`` against one replay, both through the harness. Target: <= 10x.

Prints cases/s for each contender (best of ``--rounds``, wall and CPU) and both ratios.
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
from dataclasses import replace
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
from golden_distill.datasets.replay.boundaries import ModelResponse, model_response
from golden_distill.datasets.replay.contract import BaselineCall, ReplayInput
from golden_distill.datasets.store.publish import publish_version
from golden_distill.synthetic import generate_corpus

TARGET = 3.0
REPEAT, REPEAT_TARGET = 10, 10.0
MODEL = "bench-model"
_seq = operator.attrgetter("seq")


def with_model_steps(case: Case) -> Case:
    """``case`` with a recorded model step before its first tool call and one after its last."""
    steps = [replace(s, seq=s.seq + 1) for s in sorted(case.steps, key=_seq)]
    plan = Step(
        seq=0,
        kind="model",
        name=MODEL,
        occurrence=1,
        tokens=120,
        response=orjson.dumps({"content": "plan", "finish_reason": "tool_calls"}).decode(),
    )
    last = (steps[-1].seq if steps else 0) + 1
    answer = Step(seq=last, kind="model", name=MODEL, occurrence=2, tokens=60,
                  response=orjson.dumps({"content": case.outcome.answer_text,
                                         "finish_reason": "stop"}).decode())  # fmt: skip
    return replace(case, steps=[plan, *steps, answer])


def build_set(work: Path, sessions: int) -> tuple[str, str]:
    t0 = time.perf_counter()
    generate_corpus(work / "corpus", sessions=sessions, seed=5, shards=2, compress=None)
    summary = ingest([str(work / "corpus")], work / "canonical")
    table = pa.concat_tables([pq.read_table(p) for p in summary.shards])
    version = publish_version(str(work / "store"), "bench", cases=table).version
    print(f"built the set: {table.num_rows} cases in {time.perf_counter() - t0:.1f} s")
    return str(work / "store"), f"bench@{version}"


class DictModel:
    """The baseline's model: the recorded model responses, in order."""

    def __init__(self, steps: list[Step]) -> None:
        self.answers = [s for s in steps if s.kind == "model"]

    def complete(self, messages: Any = None, **params: Any) -> ModelResponse:
        step = self.answers.pop(0)
        return model_response(step)


class DictTools:
    """The baseline: recorded responses by (tool, canonical arguments), nth call nth answer;
    model responses in order."""

    def __init__(self, steps: list[Step], calls: tuple[BaselineCall, ...], all_steps: list[Step]):
        self.answers: dict[tuple[str, bytes], list[Step]] = {}
        for step, call in zip(steps, calls, strict=True):
            key = (call.name, orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS))
            self.answers.setdefault(key, []).append(step)
        self.llm = DictModel(all_steps)

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
        ordered = sorted(case.steps, key=_seq)
        steps = [s for s in ordered if s.kind != "model"]
        calls = tuple(
            BaselineCall(s.seq, s.name, orjson.loads(s.arguments) if s.arguments else None, False)
            for s in steps
        )
        models = tuple(BaselineCall(s.seq, s.name, None, False, "model")
                       for s in ordered if s.kind == "model")  # fmt: skip
        tools = DictTools(steps, calls, ordered)
        result = reissue(ReplayInput.from_case(case, calls, models), tools)
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
        cases = [with_model_steps(c.case) for c in golden.cases()]
        steps = sum(len(c.steps) for c in cases)
        models = sum(1 for c in cases for s in c.steps if s.kind == "model")
        print(f"{len(cases)} cases, {steps} recorded steps ({models} model steps) in memory")
        config = ReplayConfig()

        def harness(repeat: int = 1) -> None:
            run = replay_cases(cases, reissue, config, baseline_version=ref,
                               volatile_keys=golden.volatile_keys, repeat=repeat)  # fmt: skip
            assert run.gate.verdict == "pass", run.figures
            assert not any(r.check.diffs for r in run.runs)
            assert run.figures["token_growth"] is not None  # the model stub's tokens counted

        plain, full = "plain dict lookup (baseline)", "full replay, model + tool stubs"
        rates, cpu_rates = timed({plain: lambda: baseline(cases), full: harness}, len(cases),
                                 args.rounds)  # fmt: skip
        ratio, cpu_ratio = rates[plain] / rates[full], cpu_rates[plain] / cpu_rates[full]
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(f"full replay costs {ratio:.2f}x the plain loop ({verdict} the <= {TARGET}x "
              f"target); {cpu_ratio:.2f}x in CPU time")  # fmt: skip
        once, repeated = "one replay", f"--repeat {REPEAT}"
        rates, cpu_rates = timed({once: harness, repeated: lambda: harness(REPEAT)}, len(cases),
                                 max(1, args.rounds - 1))  # fmt: skip
        ratio, cpu_ratio = rates[once] / rates[repeated], cpu_rates[once] / cpu_rates[repeated]
        verdict = "meets" if ratio <= REPEAT_TARGET else "MISSES"
        print(f"--repeat {REPEAT} costs {ratio:.2f}x one replay ({verdict} the <= "
              f"{REPEAT_TARGET:g}x target); {cpu_ratio:.2f}x in CPU time; load average "
              f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
