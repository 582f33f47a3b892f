"""Replaying cases: one case under the stubs and the frozen clock, then a whole set.

``replay_case`` is the unit (the pytest plugin calls it per test); ``replay_cases`` runs many, in
this process or, with ``jobs > 1``, in worker processes (stubs patch process-wide state: the
clock, ``uuid4``, ``secrets``), each worker loading the agent from its ``MODULE:CALLABLE`` spec.
"""

from __future__ import annotations

import gc
import importlib
import os
import secrets as _secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from golden_distill.datasets.canonical_json import normalise_volatile_keys
from golden_distill.datasets.case import Case
from golden_distill.datasets.replay.assertions import CaseAsserter, CaseCheck
from golden_distill.datasets.replay.config import ReplayConfig
from golden_distill.datasets.replay.contract import AgentResult, BaselineCall, ReplayInput
from golden_distill.datasets.replay.determinism import Determinism
from golden_distill.datasets.replay.gate import GateResult, evaluate
from golden_distill.datasets.replay.stubs import ServedCall, VirtualTools, parse_json

AgentFn = Callable[[ReplayInput, Any], AgentResult]


class AgentSpecError(ValueError):
    """``--agent`` does not name a callable as ``MODULE:CALLABLE``."""


def load_agent(spec: str) -> AgentFn:
    """The callable named ``package.module:name`` (``name`` may be dotted)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AgentSpecError(f"--agent {spec!r}: expected MODULE:CALLABLE, e.g. my_agent:run")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentSpecError(f"--agent {spec!r}: cannot import {module_name} ({exc})") from None
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise AgentSpecError(f"--agent {spec!r}: {module_name} has no {attr}")
    if not callable(target):
        raise AgentSpecError(f"--agent {spec!r}: {attr} is not callable")
    return target


@dataclass(slots=True)
class CaseRun:
    """One replayed case: the calls served, what the agent returned, the diffs."""

    case: Case
    check: CaseCheck
    calls: list[ServedCall]
    result: AgentResult | None
    agent_error: str | None = None


def baseline_calls(case: Case, tools: VirtualTools) -> tuple[BaselineCall, ...]:
    writes = tools._writes  # every step's tool is in it (is_write's lookup, per step)
    return tuple(
        [BaselineCall(s.seq, s.name, parse_json(s.arguments), writes[s.name]) for s in tools.steps]
    )


def replay_case(
    agent: AgentFn,
    case: Case | Any,
    config: ReplayConfig | None = None,
    volatile_keys: Iterable[str] | None = None,
    asserter: CaseAsserter | None = None,
    determinism: Determinism | None = None,
) -> CaseRun:
    """Run ``agent`` on ``case`` (a ``Case`` or the reader's ``ReplayCase``) with every tool
    call served from the recording."""
    case = getattr(case, "case", case)
    config = config or ReplayConfig()
    asserter = asserter or CaseAsserter(config)
    tools = VirtualTools(case.steps, config.matching, volatile_keys)
    replay_input = ReplayInput.from_case(case, baseline_calls(case, tools))
    if determinism is None:  # one case alone: patch and restore around it
        with Determinism(config.determinism.tick_ms) as alone:
            result, error = _run_agent(agent, case, replay_input, tools, alone)
    else:
        result, error = _run_agent(agent, case, replay_input, tools, determinism)
    check = asserter.check(case, tools, result, error)
    return CaseRun(case, check, tools.log, result, error)


def _run_agent(
    agent: AgentFn,
    case: Case,
    replay_input: ReplayInput,
    tools: VirtualTools,
    determinism: Determinism,
) -> tuple[AgentResult | None, str | None]:
    determinism.case(case.case_id, case.recorded_at, tools)  # the clock ticks per call it counts
    try:
        returned = agent(replay_input, tools)
    except Exception as exc:  # the agent's failure is a finding, not a harness crash
        return None, type(exc).__name__  # never its message: it may quote case data
    if isinstance(returned, AgentResult):
        return returned, None
    return None, f"returned {type(returned).__name__}, not AgentResult"


@dataclass(slots=True)
class ReplayRun:
    """A whole replay: every case's run, the gate's verdict, the run's identity."""

    run_id: str
    baseline_version: str
    new_version: str | None
    started_at: datetime
    finished_at: datetime
    runs: list[CaseRun]
    gate: GateResult
    figures: dict[str, float]

    @property
    def exit_code(self) -> int:
        return self.gate.exit_code


def new_run_id(now: datetime) -> str:
    return f"run_{now:%Y%m%dT%H%M%S}_{_secrets.token_hex(4)}"


def _worker(
    args: tuple[str, list[dict[str, Any]], dict[str, Any], frozenset[str], bool],
) -> list[CaseRun]:
    spec, rows, config, volatile, keep_calls = args
    agent = load_agent(spec)
    parsed = ReplayConfig.model_validate(config)
    asserter = CaseAsserter(parsed)
    with Determinism(parsed.determinism.tick_ms) as determinism:
        runs = [
            replay_case(agent, Case.from_row(r), parsed, volatile, asserter, determinism)
            for r in rows
        ]
    if not keep_calls:  # not sent back either
        for run in runs:
            _forget_clean_calls(run)
    return runs


def _forget_clean_calls(run: CaseRun) -> None:
    """A case without diffs keeps no call log: its calls were served as recorded (or forgiven),
    and a whole set's logs would grow the heap by a few KiB per case for nobody (the report,
    the result tables and the gate read the checks)."""
    if not run.check.diffs:
        run.calls = []


def replay_cases(
    cases: Iterable[Case],
    agent: AgentFn | str,
    config: ReplayConfig | None = None,
    *,
    baseline_version: str,
    new_version: str | None = None,
    volatile_keys: Iterable[str] | None = None,
    jobs: int = 1,
    on_case: Callable[[CaseRun], None] | None = None,
    keep_calls: bool = False,
) -> ReplayRun:
    """Replay every case and evaluate the gate. ``agent`` is a callable, or a
    ``MODULE:CALLABLE`` spec (required for ``jobs > 1``: workers import it). The runs of cases
    without diffs keep their call log (``CaseRun.calls``) only with ``keep_calls``; ``on_case``
    sees every run whole."""
    config = config or ReplayConfig()
    started = datetime.now(UTC)
    volatile = normalise_volatile_keys(volatile_keys)  # once per run, not per case
    runs: list[CaseRun] = []
    # The kept runs hold no cycles; the cyclic GC would rescan all of them on every collection
    # (the more so the larger the set), so it pauses, on the main thread only.
    pause_gc = gc.isenabled() and threading.current_thread() is threading.main_thread()
    if pause_gc:
        gc.disable()
    try:
        for run in _iter_runs(cases, agent, config, volatile, jobs, keep_calls):
            runs.append(run)
            if on_case is not None:
                on_case(run)
            if not keep_calls:
                _forget_clean_calls(run)
    finally:
        if pause_gc:
            gc.enable()
    gate, figures = evaluate((r.check for r in runs), config.gate)
    return ReplayRun(
        new_run_id(started), baseline_version, new_version, started, datetime.now(UTC), runs,
        gate, figures,
    )  # fmt: skip


def _iter_runs(
    cases: Iterable[Case],
    agent: AgentFn | str,
    config: ReplayConfig,
    volatile: frozenset[str],
    jobs: int,
    keep_calls: bool = False,
) -> Iterator[CaseRun]:
    if jobs <= 1:
        fn = load_agent(agent) if isinstance(agent, str) else agent
        asserter = CaseAsserter(config)
        # the patches are installed once; between cases the caller's code (reading the next
        # case, a progress bar) runs with them in place: harmless, and 2x faster per case
        with Determinism(config.determinism.tick_ms) as determinism:
            for case in cases:
                yield replay_case(fn, case, config, volatile, asserter, determinism)
        return
    if not isinstance(agent, str):
        raise AgentSpecError("jobs > 1 needs the agent as a MODULE:CALLABLE spec")
    load_agent(agent)  # fail fast, before any worker starts
    chunk: list[dict[str, Any]] = []
    payload = config.model_dump()
    with ProcessPoolExecutor(max_workers=min(jobs, os.cpu_count() or 1)) as pool:
        futures = []
        for case in cases:
            case = getattr(case, "case", case)
            chunk.append(case.to_row(pipeline_fields=True))
            if len(chunk) >= 64:
                futures.append(pool.submit(_worker, (agent, chunk, payload, volatile, keep_calls)))
                chunk = []
        if chunk:
            futures.append(pool.submit(_worker, (agent, chunk, payload, volatile, keep_calls)))
        for future in futures:
            yield from future.result()
