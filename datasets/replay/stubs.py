"""Virtual tool stubs: every call an agent makes is served from the recording, never executed.

Two-stage match, per call:

1. **exact**: tool name + canonical arguments hash (``canonical_json``, the same volatile keys as
   ingest); the nth identical call gets the nth recording, so retries replay in order.
2. **tolerant**: the tool's unused recordings compared after the ``Normaliser`` (added empty or
   default keys, date formats, ``1`` vs ``1.0``, text-field whitespace/case); then, for read
   tools only, the tool's next unused recording.

Writes never reach anything real: a matched write returns its recording; an unmatched write gets
a synthetic receipt shaped like the tool's recorded responses (ids ``mock-...``). Every
successful write is applied to the case's baseline state (``sandbox``; a synthetic write with
what it gave, not what its receipt copied from the recording): the final-state check judges the
state the writes leave, and once the replay's writes part from the recorded ones (a write
dropped, changed, added or moved before a read), a read of an entity they touch is served the
sandbox's fields over its recording. A tool with no recording at all is a stub escape:
``StubEscape`` is raised inside the agent and reported. Every call is logged (``ServedCall``)
for the assertions, with the tolerances that matched it.

The same object carries the other boundaries (``boundaries``): ``tools.llm.complete(...)`` and
``tools.route(name, payload)`` serve the recorded model and route steps; names given as ``live``
go to registered implementations instead (reads only: writes stay in the sandbox).
"""

from __future__ import annotations

import copy
import hashlib
import operator
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from golden_distill.datasets.canonical_json import (
    canonical_args_sha256,
    canonical_json_normalised,
    normalise_volatile_keys,
)
from golden_distill.datasets.case import Step
from golden_distill.datasets.replay.boundaries import BoundaryStubs, awaited, settle
from golden_distill.datasets.replay.config import MatchingSection
from golden_distill.datasets.replay.contract import StubEscape, ToolCallError, parse_json
from golden_distill.datasets.replay.normalise import Normaliser, recorded_defaults
from golden_distill.datasets.replay.sandbox import (
    State,
    Write,
    apply_writes,
    baseline_state,
    own_effect,
    receipt,
    sandboxed_read,
)

#: How a call was served.
EXACT, TOLERANT, NEXT_UNUSED, SYNTHETIC, EXHAUSTED, ESCAPE, LIVE = (
    "exact", "tolerant", "next_unused", "synthetic", "exhausted", "escape", "live"
)  # fmt: skip
#: Tool kinds an agent calls (model/route steps are not tools).
TOOL_KINDS = ("tool", "handoff")
_CONTAINERS = frozenset({dict, list})
_SORT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


_seq = operator.attrgetter("seq")  # a step's order (C-level: the key of every per-case sort)


def _plain(value: Any, volatile: frozenset[str]) -> bool:
    """No volatile key and only ``str`` keys at any depth, in plain dicts and lists only: then
    ``canonical_json`` of ``value`` is ``value`` sorted (checked without copying, as ``_strip``
    would; anything unusual answers False and takes the full path)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or key.lower() in volatile:
                return False
            if isinstance(item, dict | list) and not _plain(item, volatile):
                return False
        return True
    if kind is list:
        return all(not isinstance(item, dict | list) or _plain(item, volatile) for item in value)
    return not isinstance(value, dict | list)  # a scalar; a dict/list subclass takes the full path


def _parsed(arguments: Any) -> Any:
    """Arguments given as JSON text, parsed."""
    if isinstance(arguments, bytes):
        arguments = arguments.decode()
    return parse_json(arguments) if isinstance(arguments, str) else arguments


@dataclass(slots=True)
class ServedCall:
    """One call the agent made and how the stubs answered it."""

    index: int  # 0-based, in the order the agent called
    name: str
    arguments: Any  # as called (parsed)
    #: canonical JSON text of the arguments (a ``str``: orjson's ``bytes`` keep a 4 KiB buffer
    #: each, which every kept log record would hold on to)
    canonical: str
    is_write: bool
    match: str  # EXACT | TOLERANT | NEXT_UNUSED | SYNTHETIC | EXHAUSTED | ESCAPE
    recorded_seq: int | None  # the recording served (None: synthetic or escape)
    response: str | None  # JSON text served
    status: str
    error: str | None
    tolerances: tuple[str, ...] = ()  # what a tolerant match forgave (``normalise``)


class VirtualTools(BoundaryStubs):
    """The ``ToolStub`` of one case: its tools, its model (``llm``) and routes (``route``)."""

    def __init__(
        self,
        steps: Iterable[Step],
        matching: MatchingSection,
        volatile_keys: Iterable[str] | None = None,
        live: dict[str, Any] | None = None,
        baseline: str | None = None,
    ) -> None:
        steps = steps if isinstance(steps, list) else list(steps)
        self.all_steps = steps
        self.steps = sorted([s for s in steps if s.kind in TOOL_KINDS], key=_seq)
        self.matching = matching
        self.live = live or {}
        self.baseline = baseline  # the case's baseline state (JSON text)
        self._llm = None
        self._routes = None
        self._defaults: dict[str, Any] | None = None
        # a frozenset is taken as already normalised (replay_cases normalises once per run)
        self.volatile = (
            volatile_keys
            if isinstance(volatile_keys, frozenset)
            else normalise_volatile_keys(volatile_keys)
        )
        self._normaliser: Normaliser | None = None  # built on the first tolerant match
        self.calls = 0  # tool calls made (the replay clock ticks once per call: determinism)
        self.log: list[ServedCall] = []
        self._used: set[int] = set()
        self._synthetic = False  # a write the recording never matched was made
        self._writes_used = 0  # recorded writes served so far ...
        self._last_write = -1  # ... and the latest recorded seq among them
        exact: dict[tuple[str, str], list[Step]] = {}
        writes: dict[str, bool] = {}  # a tool with any call not known to be a read is a write
        for step in self.steps:
            name = step.name
            digest = step.canonical_args_sha256 or canonical_args_sha256(
                step.arguments, self.volatile
            )
            exact.setdefault((name, digest), []).append(step)
            writes[name] = writes.get(name, False) or step.is_mutating is not False
        self._exact, self._writes = exact, writes
        #: the recorded writes' seqs, in order: a read at seq s follows the first
        #: ``bisect_left(_write_seqs, s)`` of them
        self._write_seqs = [s.seq for s in self.steps if writes[s.name]]
        self._tools: dict[str, list[Step]] | None = None  # built on the first inexact call

    @property
    def _by_tool(self) -> dict[str, list[Step]]:
        """Each tool's recordings in order (stage 2 and unmatched calls only: most cases never
        need it)."""
        if self._tools is None:
            self._tools = {}
            for step in self.steps:
                self._tools.setdefault(step.name, []).append(step)
        return self._tools

    def reset(self) -> None:
        """Forget what a replay did (calls, log, writes, served boundaries): the next replay of
        the same case starts fresh on the same index."""
        self.calls = 0
        self.log = []
        self._used = set()
        self._synthetic = False
        self._writes_used = 0
        self._last_write = -1
        self._llm = None
        self._routes = None

    @property
    def recorded_defaults(self) -> dict[str, Any]:
        """key -> the one value the recording holds for it (the ``recorded_default`` tolerance)."""
        if self._defaults is None:
            values = []
            for step in self.steps:
                values.append(parse_json(step.arguments))
                values.append(parse_json(step.response))
            values.append(parse_json(self.baseline))
            self._defaults = recorded_defaults(values)
        return self._defaults

    # -- the write sandbox -------------------------------------------------------------------
    def has_state(self) -> bool:
        """A state can be derived: the case records a baseline or a successful write."""
        if self.baseline is not None and parse_json(self.baseline) is not None:
            return True
        return any(s.status == "ok" and self.is_write(s.name) for s in self.steps)

    def recorded_state(self) -> State:
        """The baseline after the recorded successful writes."""
        writes: list[Write] = [
            (s.name, parse_json(s.arguments), parse_json(s.response))
            for s in self.steps
            if s.status == "ok" and self.is_write(s.name)
        ]
        return apply_writes(baseline_state(self.baseline), writes, self.volatile)

    def replayed_state(self) -> State:
        """The baseline after the writes this replay made (each with the response served; a
        synthetic receipt only with its ids: its other fields are the recording's)."""
        writes: list[Write] = [
            (c.name, c.arguments, own_effect(parse_json(c.response), c.match == SYNTHETIC))
            for c in self.log
            if c.is_write and c.status == "ok" and c.match != ESCAPE
        ]
        return apply_writes(baseline_state(self.baseline), writes, self.volatile)

    def _state_before(self, seq: int) -> State:
        """The baseline after the recorded successful writes before step ``seq``."""
        writes: list[Write] = [
            (s.name, parse_json(s.arguments), parse_json(s.response))
            for s in self.steps
            if s.seq < seq and s.status == "ok" and self.is_write(s.name)
        ]
        return apply_writes(baseline_state(self.baseline), writes, self.volatile)

    def _sandboxed(self, name: str, arguments: Any, response: str | None, seq: int) -> str | None:
        """A read's recorded response with the sandbox's fields of the entities it names."""
        value, touched = sandboxed_read(
            name, arguments, copy.deepcopy(parse_json(response)), self._state_before(seq),
            self.replayed_state(), self._writes,
        )  # fmt: skip
        return orjson.dumps(value).decode() if touched else response

    @property
    def normaliser(self) -> Normaliser:
        if self._normaliser is None:
            self._normaliser = Normaliser(self.matching)
        return self._normaliser

    def _canonical(self, value: Any) -> bytes:
        # fast path: a flat object without volatile keys (most arguments) only needs sorting
        if (
            type(value) is dict
            and self.volatile.isdisjoint(map(str.lower, value))
            and _CONTAINERS.isdisjoint(map(type, value.values()))
        ):
            return orjson.dumps(value, option=_SORT)
        return canonical_json_normalised(value, self.volatile)

    def is_write(self, tool: str) -> bool:
        """A tool with any recorded call not known to be a read counts as a write."""
        return self._writes.get(tool, True)

    # -- the ToolStub contract ---------------------------------------------------------------
    async def acall(self, name: str, arguments: Any = None) -> Any:
        """``call`` for ``async`` agents (an ``async def`` live implementation awaited)."""
        if self.live and name in self.live and not self._writes.get(name):
            self.calls += 1
            arguments = _parsed(arguments)
            answer = await awaited(self.live[name](arguments))
            return self._served_live(name, arguments, self._canonical(arguments), answer)
        return self.call(name, arguments)

    def _served_live(self, name: str, arguments: Any, canonical: bytes, answer: Any) -> Any:
        log = self.log
        log.append(ServedCall(len(log), name, arguments, canonical.decode(), False, LIVE, None,
                              orjson.dumps(answer).decode(), "ok", None))  # fmt: skip
        return answer

    def call(self, name: str, arguments: Any = None) -> Any:
        """The recorded response (parsed JSON); ``ToolCallError`` for a recorded failure."""
        self.calls += 1
        if type(arguments) is str or type(arguments) is bytes:
            arguments = _parsed(arguments)
        volatile = self.volatile
        # fast paths (inlined: this runs on every call): a flat object without volatile keys
        # (checked in C), or anything else with nothing to strip, only needs sorting
        if (
            type(arguments) is dict
            and volatile.isdisjoint(map(str.lower, arguments))
            and _CONTAINERS.isdisjoint(map(type, arguments.values()))
        ) or _plain(arguments, volatile):
            canonical = orjson.dumps(arguments, option=_SORT)
        else:
            canonical = canonical_json_normalised(arguments, volatile)
        log = self.log
        write = self._writes.get(name)
        if self.live and name in self.live and not write:  # a read sent to its live system
            answer = settle(self.live[name](arguments), name)
            return self._served_live(name, arguments, canonical, answer)
        if write is None:  # no recording of this tool at all
            log.append(ServedCall(len(log), name, arguments, canonical.decode(), True, ESCAPE,
                                  None, None, "error", "stub escape"))  # fmt: skip
            raise StubEscape(name)
        # stage 1 (exact), inlined; the stored step hashes are the key
        used = self._used
        digest = hashlib.sha256(canonical).hexdigest()
        tolerances: tuple[str, ...] = ()
        for step in self._exact.get((name, digest), ()):
            if step.seq not in used:
                how = EXACT
                break
        else:
            step, how, tolerances = self._tolerant(name, canonical, write)
        if step is not None:
            used.add(step.seq)
            response, status, error = step.response, step.status, step.error
            if write:
                self._writes_used += 1
                self._last_write = max(self._last_write, step.seq)
        else:
            response, status, error = self._unmatched(name, arguments, write), "ok", None
            how = SYNTHETIC if write else EXHAUSTED
            self._synthetic = self._synthetic or write
        if not write and status == "ok":
            # the writes served so far part from the recorded writes before this read (inline:
            # this runs on every read)
            at = step.seq if step is not None else self._by_tool[name][-1].seq
            if (
                self._synthetic
                or self._last_write > at
                or self._writes_used != bisect_left(self._write_seqs, at)
            ):
                response = self._sandboxed(name, arguments, response, at)
        seq = None if step is None or how is EXHAUSTED else step.seq
        log.append(ServedCall(len(log), name, arguments, canonical.decode(), write, how, seq,
                              response, status, error, tolerances))  # fmt: skip
        if status != "ok":
            raise ToolCallError(name, status, error)
        if response is None:
            return None
        try:
            return orjson.loads(response)
        except orjson.JSONDecodeError:
            return response

    # -- matching ----------------------------------------------------------------------------
    def _tolerant(
        self, name: str, canonical: bytes, write: bool
    ) -> tuple[Step | None, str, tuple[str, ...]]:
        """Stage 2: the tool's unused recordings under the tolerances, then (reads) the next."""
        unused = [s for s in self._by_tool[name] if s.seq not in self._used]
        stripped = orjson.loads(canonical)
        for step in unused:
            recorded = orjson.loads(self._canonical(parse_json(step.arguments)))
            found = self.normaliser.compare(name, recorded, stripped, self.recorded_defaults)
            if found.equal:
                return step, TOLERANT, tuple(sorted(found.tolerances))
        if not write and unused and self.matching.reads_take_next_unused:
            return unused[0], NEXT_UNUSED, ()
        return None, "", ()

    def _unmatched(self, name: str, arguments: Any, write: bool) -> str | None:
        """A synthetic receipt for a write; for a read whose recordings are all used, its last
        recording again (reads are repeatable)."""
        calls = self._by_tool[name]
        if not write:
            return calls[-1].response
        n = sum(1 for c in self.log if c.match == SYNTHETIC) + 1
        template = next((parse_json(c.response) for c in calls if c.status == "ok"), None)
        return orjson.dumps(receipt(template, arguments, f"mock-{name}-{n}")).decode()
