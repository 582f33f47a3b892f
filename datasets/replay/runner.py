"""Replaying cases: one case under the stubs and the frozen clock, then a whole set.

``replay_case`` is the unit (the pytest plugin calls it per test); ``replay_cases`` runs many, in
this process or, with ``jobs > 1``, in worker processes (stubs patch process-wide state: the
clock, ``uuid4``, ``secrets``), each worker loading the agent from its ``MODULE:CALLABLE`` spec.
``live`` names the boundaries sent to registered implementations (``boundaries``); ``repeat``
replays each case N times and merges the runs (``repeat``). A broken agent (wrong return type,
raising on every case) raises ``AgentUsageError`` instead of producing a verdict.
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
from golden_distill.datasets.replay.agent_call import (
    AgentCaller,
    AgentFailure,
    raised_everywhere,
)
from golden_distill.datasets.replay.assertions import CaseAsserter, CaseCheck
from golden_distill.datasets.replay.boundaries import resolve_live
from golden_distill.datasets.replay.config import ReplayConfig
from golden_distill.datasets.replay.contract import AgentResult, BaselineCall, ReplayInput
from golden_distill.datasets.replay.determinism import Determinism
from golden_distill.datasets.replay.gate import GateResult, evaluate
from golden_distill.datasets.replay.repeat import merge_repeats
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
    agent_error: str | None = None  # "KeyError: 'x'" when the agent raised
    agent_traceback: str | None = None


def baseline_boundaries(tools: VirtualTools) -> tuple[BaselineCall, ...]:
    """The recorded model and route steps, in order (most cases have none)."""
    steps = tools.recorded_boundaries()
    if not steps:
        return ()
    return tuple(
        BaselineCall(s.seq, s.name, parse_json(s.arguments), False, s.kind)
        for s in sorted(steps, key=lambda s: s.seq)
    )


def baseline_calls(case: Case, tools: VirtualTools) -> tuple[BaselineCall, ...]:
    writes = tools._writes  # every step's tool is in it (is_write's lookup, per step)
    return tuple(
        [BaselineCall(s.seq, s.name, parse_json(s.arguments), writes[s.name]) for s in tools.steps]
    )


def replay_case(
    agent: AgentFn | AgentCaller,
    case: Case | Any,
    config: ReplayConfig | None = None,
    volatile_keys: Iterable[str] | None = None,
    asserter: CaseAsserter | None = None,
    determinism: Determinism | None = None,
    *,
    live: dict[str, Callable[..., Any]] | None = None,
) -> CaseRun:
    """Run ``agent`` on ``case`` (a ``Case`` or the reader's ``ReplayCase``) with every boundary
    served from the recording (``live``: name -> implementation for the cut points).
    ``AgentUsageError`` when the agent returns anything but an ``AgentResult``."""
    case = getattr(case, "case", case)
    config = config or ReplayConfig()
    asserter = asserter or CaseAsserter(config)
    caller = agent if isinstance(agent, AgentCaller) else AgentCaller(agent)
    tools = VirtualTools(case.steps, config.matching, volatile_keys, live,
                         case.context.baseline_state)  # fmt: skip
    try:
        if determinism is None:  # one case alone: patch and restore around it
            with Determinism(config.determinism.tick_ms) as alone:
                return _replay(caller, case, tools, asserter, alone)
        return _replay(caller, case, tools, asserter, determinism)
    finally:
        if caller is not agent:
            caller.close()


def _replay(
    caller: AgentCaller,
    case: Case,
    tools: VirtualTools,
    asserter: CaseAsserter,
    determinism: Determinism,
    replay_input: ReplayInput | None = None,
) -> CaseRun:
    """One replay of ``case`` with ``tools`` (fresh or ``reset``)."""
    if replay_input is None:
        replay_input = input_of(case, tools)
    determinism.case(case.case_id, case.recorded_at, tools)  # ticks per call the stubs count
    result, failure = caller(replay_input, tools)
    kind = failure.kind if failure else None
    trace = failure.traceback if failure else None
    check = asserter.check(case, tools, result, kind, trace)
    return CaseRun(case, check, tools.log, result, kind, trace)


def input_of(case: Case, tools: VirtualTools) -> ReplayInput:
    """What the agent receives for ``case``."""
    return ReplayInput.from_case(case, baseline_calls(case, tools), baseline_boundaries(tools))


def replay_repeated(
    caller: AgentCaller,
    case: Case | Any,
    config: ReplayConfig,
    volatile_keys: Iterable[str] | None,
    asserter: CaseAsserter,
    determinism: Determinism,
    live: dict[str, Callable[..., Any]] | None,
    repeat: int,
) -> CaseRun:
    """The case replayed ``repeat`` times (the stubs' index and the agent's input, which is
    frozen, built once; the stubs' state reset between replays), merged
    (``repeat.merge_repeats``); the first run's calls and result are kept."""
    case = getattr(case, "case", case)
    tools = VirtualTools(case.steps, config.matching, volatile_keys, live,
                         case.context.baseline_state)  # fmt: skip
    replay_input = input_of(case, tools)
    first = _replay(caller, case, tools, asserter, determinism, replay_input)
    if repeat == 1:
        return first
    checks = [first.check]
    for _ in range(repeat - 1):
        tools.reset()
        checks.append(_replay(caller, case, tools, asserter, determinism, replay_input).check)
    first.check = merge_repeats(checks, config.gate.repeat.min_diff_ratio)
    return first


def agent_version(agent: Any) -> str | None:
    """The version an agent declares: its ``version``/``__version__``, else its module's."""
    for holder in (agent, importlib.import_module(agent.__module__)
                   if isinstance(getattr(agent, "__module__", None), str) else None):  # fmt: skip
        for attr in ("version", "__version__"):
            value = getattr(holder, attr, None)
            if isinstance(value, str) and value:
                return value
    return None


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
    figures: dict[str, float | None]
    #: what changed since the previous replay of the same set (``previous.compare``)
    changes: Any = None

    @property
    def recorded_versions(self) -> list[str]:
        """The agent versions the cases were recorded with."""
        return sorted({r.case.agent.agent_version for r in self.runs
                       if r.case.agent.agent_version})  # fmt: skip

    @property
    def exit_code(self) -> int:
        return self.gate.exit_code


def new_run_id(now: datetime) -> str:
    return f"run_{now:%Y%m%dT%H%M%S}_{_secrets.token_hex(4)}"


def _worker(
    args: tuple[str, list[dict[str, Any]], dict[str, Any], frozenset[str], bool, list[str], int],
) -> list[CaseRun]:
    spec, rows, config, volatile, keep_calls, live_names, repeat = args
    caller = AgentCaller(load_agent(spec))
    live = resolve_live(live_names) if live_names else None  # registered on the agent's import
    parsed = ReplayConfig.model_validate(config)
    asserter = CaseAsserter(parsed)
    try:
        with Determinism(parsed.determinism.tick_ms) as determinism:
            runs = [
                replay_repeated(
                    caller, Case.from_row(r), parsed, volatile, asserter, determinism, live, repeat
                )
                for r in rows
            ]
    finally:
        caller.close()
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
    live: Iterable[str] | None = None,
    repeat: int = 1,
) -> ReplayRun:
    """Replay every case and evaluate the gate. ``agent`` is a callable, or a
    ``MODULE:CALLABLE`` spec (required for ``jobs > 1``: workers import it). The runs of cases
    without diffs keep their call log (``CaseRun.calls``) only with ``keep_calls``; ``on_case``
    sees every run whole. ``live``: boundary names sent to their registered implementations;
    ``repeat``: replays per case. ``new_version`` defaults to the agent's declared version.
    ``AgentUsageError`` (a usage error, not a verdict) when the agent breaks the contract or
    raises on every case."""
    config = config or ReplayConfig()
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, not {repeat}")
    fn = load_agent(agent) if isinstance(agent, str) else agent
    if new_version is None:
        new_version = agent_version(fn)
    live_names = list(dict.fromkeys(live or ()))
    resolve_live(live_names)  # LiveError before any case runs
    started = datetime.now(UTC)
    volatile = normalise_volatile_keys(volatile_keys)  # once per run, not per case
    runs: list[CaseRun] = []
    # The kept runs hold no cycles; the cyclic GC would rescan all of them on every collection
    # (the more so the larger the set), so it pauses, on the main thread only.
    pause_gc = gc.isenabled() and threading.current_thread() is threading.main_thread()
    if pause_gc:
        gc.disable()
    try:
        for run in _iter_runs(cases, agent if jobs > 1 else fn, config, volatile, jobs,
                              keep_calls, live_names, repeat):  # fmt: skip
            runs.append(run)
            if on_case is not None:
                on_case(run)
            if not keep_calls:
                _forget_clean_calls(run)
    finally:
        if pause_gc:
            gc.enable()
    broken = raised_everywhere([_failure(r) for r in runs])
    if broken is not None:
        raise broken
    gate, figures = evaluate((r.check for r in runs), config.gate)
    return ReplayRun(
        new_run_id(started), baseline_version, new_version, started, datetime.now(UTC), runs,
        gate, figures,
    )  # fmt: skip


def _failure(run: CaseRun) -> AgentFailure | None:
    if run.agent_error is None:
        return None
    return AgentFailure(run.agent_error, run.agent_traceback or "")


def _iter_runs(
    cases: Iterable[Case],
    agent: AgentFn | str,
    config: ReplayConfig,
    volatile: frozenset[str],
    jobs: int,
    keep_calls: bool = False,
    live_names: list[str] | None = None,
    repeat: int = 1,
) -> Iterator[CaseRun]:
    if jobs <= 1:
        caller = AgentCaller(load_agent(agent) if isinstance(agent, str) else agent)
        live = resolve_live(live_names) if live_names else None
        asserter = CaseAsserter(config)
        # the patches are installed once; between cases the caller's code (reading the next
        # case, a progress bar) runs with them in place: harmless, and 2x faster per case
        try:
            with Determinism(config.determinism.tick_ms) as determinism:
                for case in cases:
                    yield replay_repeated(caller, case, config, volatile, asserter, determinism,
                                          live, repeat)  # fmt: skip
        finally:
            caller.close()
        return
    if not isinstance(agent, str):
        raise AgentSpecError("jobs > 1 needs the agent as a MODULE:CALLABLE spec")
    load_agent(agent)  # fail fast, before any worker starts
    chunk: list[dict[str, Any]] = []
    payload = config.model_dump()
    names = live_names or []
    with ProcessPoolExecutor(max_workers=min(jobs, os.cpu_count() or 1)) as pool:
        futures = []
        for case in cases:
            case = getattr(case, "case", case)
            chunk.append(case.to_row(pipeline_fields=True))
            if len(chunk) >= 64:
                futures.append(pool.submit(_worker, (agent, chunk, payload, volatile, keep_calls,
                                                     names, repeat)))  # fmt: skip
                chunk = []
        if chunk:
            futures.append(pool.submit(_worker, (agent, chunk, payload, volatile, keep_calls,
                                                 names, repeat)))  # fmt: skip
        for future in futures:
            yield from future.result()
