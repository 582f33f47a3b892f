"""Layer 3, expected writes: the replay's successful writes against ``expected.actions``.

An expected action (tool name + key arguments, e.g. tau-bench's task ``actions``) is *met* by a
successful write of that tool whose arguments contain every key argument with an equal value
(in the stage-2 normal form: ``1`` = ``1.0``, date formats, text-field case); keys the action
does not name are free, as in tau-bench's grader. Actions and writes pair one to one, greedily,
in order.

A regression gate compares with what the recorded version achieved, so the check is relative to
the recording (like the answer facts): an expected action the recording met must still be met
(else it is *missing*); a successful write that meets no expected action is *extra* unless the
recording made the same unexpected write. An expectation the recording itself missed (a failed
tau-bench run) is a known failure, not a regression; a replayed write that now meets it is
reported as such (``newly_met``). The expected actions are checked when the list is non-empty,
or when the source is a tau-bench task (a task listing no actions expects no writes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from golden_distill.datasets.canonical_json import canonical_json_normalised
from golden_distill.datasets.case import Expected, ExpectedAction, Step
from golden_distill.datasets.replay.normalise import Normaliser
from golden_distill.datasets.replay.stubs import ServedCall, parse_json

#: Expected-outcome sources whose empty action list still says "no write expected".
EMPTY_MEANS_NO_WRITES = frozenset({"tau_bench_task"})


@dataclass(slots=True)
class ActionCheck:
    """What the replay's writes did to the expected actions, relative to the recording."""

    #: expected actions the recording met and the replay does not, with the recorded write
    #: that met each
    missing: list[tuple[ExpectedAction, Step]] = field(default_factory=list)
    #: replayed successful writes meeting no expected action, beyond the recording's own
    extra: list[ServedCall] = field(default_factory=list)
    #: replayed writes (``ServedCall.index``) meeting an expected action the recording missed
    newly_met: set[int] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra


def checks_actions(expected: Expected | None) -> bool:
    """Whether ``expected`` says which writes a replay must make."""
    if expected is None:
        return False
    return bool(expected.actions) or expected.source in EMPTY_MEANS_NO_WRITES


def check_expected_actions(
    expected: Expected,
    steps: Iterable[Step],
    log: Iterable[ServedCall],
    is_write: Callable[[str], bool],
    normaliser: Normaliser,
    volatile: frozenset[str],
) -> ActionCheck:
    """Pair the expected actions with the recorded and with the replayed successful writes."""
    normal = normaliser.value
    wanted = [
        (a, normal({} if a.arguments is None else parse_json(a.arguments)))
        for a in expected.actions
    ]
    recorded = [
        (s, normal(orjson.loads(canonical_json_normalised(parse_json(s.arguments), volatile))))
        for s in steps
        if s.status == "ok" and is_write(s.name)
    ]
    replayed = [
        (c, normal(orjson.loads(c.canonical))) for c in log if c.is_write and c.status == "ok"
    ]
    met_by_recording, recorded_unexpected = _pair(wanted, recorded)
    met_by_replay, replayed_unexpected = _pair(wanted, replayed)
    out = ActionCheck()
    for i, step in met_by_recording.items():
        if i not in met_by_replay:
            out.missing.append((wanted[i][0], step))
    for i, call in met_by_replay.items():
        if i not in met_by_recording:
            out.newly_met.add(call.index)
    # unexpected writes the recording made too are not a regression (same tool, same arguments)
    allowed = Counter(_signature(s.name, args) for s, args in recorded_unexpected)
    for call, args in replayed_unexpected:
        signature = _signature(call.name, args)
        if allowed[signature] > 0:
            allowed[signature] -= 1
        else:
            out.extra.append(call)
    return out


def _pair(
    wanted: list[tuple[ExpectedAction, Any]], writes: list[tuple[Any, Any]]
) -> tuple[dict[int, Any], list[tuple[Any, Any]]]:
    """Expected action index -> the write meeting it (first unused, in order); unpaired writes."""
    taken: set[int] = set()
    met: dict[int, Any] = {}
    for i, (action, want) in enumerate(wanted):
        for j, (write, got) in enumerate(writes):
            if j not in taken and write.name == action.name and contains(want, got):
                taken.add(j)
                met[i] = write
                break
    return met, [w for j, w in enumerate(writes) if j not in taken]


def contains(want: Any, got: Any) -> bool:
    """Every key ``want`` names is in ``got`` with a value it contains; lists pair item by item;
    anything else must be equal."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(
            k in got and contains(v, got[k]) for k, v in want.items()
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(want) == len(got)
            and all(contains(w, g) for w, g in zip(want, got, strict=True))
        )
    return want == got


def _signature(name: str, args: Any) -> tuple[str, bytes]:
    return name, orjson.dumps(args, option=orjson.OPT_SORT_KEYS)
