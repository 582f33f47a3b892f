"""Determinism while a case replays: a frozen clock and seeded randomness.

The clock (``time-machine``) is frozen at the case's recorded time and moves forward by a fixed
tick on every tool call, so ``datetime.now()``/``time.time()`` read the same values on every
replay. The tick is read, not pushed: the traveller's reading adds one tick per call the case's
stubs have counted so far (``VirtualTools.calls``), so a tool call costs a counter increment
instead of a clock shift, and the readings are those of shifting on every call. ``random``'s
global generator is seeded from the case id, and ``uuid.uuid4`` and the ``secrets`` functions
draw from a generator seeded the same way. All of this is process-global (module attributes and
the clock), which is why parallel replay uses processes, not threads. Agents should call
``uuid.uuid4()`` / ``secrets.token_hex()`` through their modules (a name imported with
``from uuid import uuid4`` before the replay keeps the real function).
"""

from __future__ import annotations

import _random
import base64
import hashlib
import random
import secrets
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine

#: When a case has no recorded time, the clock starts here (still the same on every replay).
FALLBACK_TIME = datetime(2000, 1, 1, tzinfo=UTC)
#: The generator ``random.random()``, ``random.choice()``... draw from (reseeded per case).
_global_random: random.Random = random.seed.__self__  # type: ignore[assignment]
_seed = _random.Random.seed
_SECRETS = ("token_bytes", "token_hex", "token_urlsafe", "randbits", "randbelow", "choice")


class _CaseClock(time_machine.Traveller):
    """time-machine's traveller (its C hooks read every patched clock through ``time_ns``),
    reading the frozen time plus one tick per tool call counted by the case's stubs."""

    tick_ns: int = 0
    tools: Any = None  # the case's VirtualTools (``calls``: the tool calls made so far)

    def time_ns(self) -> int:
        base: int = time_machine.Traveller.time_ns(self)
        tools = self.tools
        return base if tools is None else base + self.tick_ns * tools.calls


def case_seed(case_id: str) -> int:
    return int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "big")


@dataclass(slots=True)
class FrozenClock:
    """The case's clock; ``tick()`` is called by the stubs on every tool call."""

    traveller: Any
    step: timedelta

    def tick(self) -> None:
        if self.step:
            self.traveller.shift(self.step)


def _seeded_secrets(rng: Callable[[], random.Random]) -> dict[str, Any]:
    """The ``secrets`` functions drawing from ``rng()`` (the case's generator, seeded on use)."""

    def token_bytes(nbytes: int | None = None) -> bytes:
        return rng().randbytes(32 if nbytes is None else nbytes)

    def token_hex(nbytes: int | None = None) -> str:
        return token_bytes(nbytes).hex()

    def token_urlsafe(nbytes: int | None = None) -> str:
        return base64.urlsafe_b64encode(token_bytes(nbytes)).rstrip(b"=").decode("ascii")

    return {
        "token_bytes": token_bytes,
        "token_hex": token_hex,
        "token_urlsafe": token_urlsafe,
        "randbits": lambda k: rng().getrandbits(k),
        "randbelow": lambda n: rng().randrange(n),
        "choice": lambda seq: rng().choice(seq),
    }


class Determinism:
    """The process-wide patches (clock, ``uuid4``, ``secrets``), installed once for many cases;
    ``case()`` moves the clock to a case's recorded time and reseeds every generator."""

    def __init__(self, tick_ms: int) -> None:
        self.step = timedelta(milliseconds=tick_ms)
        self.rng = random.Random(0)
        #: the seed ``rng`` takes before its next draw (seeding is deferred to the first
        #: ``uuid4``/``secrets`` call: most cases draw nothing, and a seed costs as much as
        #: a tool call; the draws are the same as with eager seeding)
        self._pending_seed: int | None = None
        self._travel: Any = None
        self._saved: dict[str, Any] = {}
        self._random_state: Any = None

    def _generator(self) -> random.Random:
        if self._pending_seed is not None:
            self.rng.seed(self._pending_seed)
            self._pending_seed = None
        return self.rng

    def __enter__(self) -> Determinism:
        rng = self._generator
        self._random_state = random.getstate()
        self._saved = {name: getattr(secrets, name) for name in _SECRETS}
        self._saved["uuid4"] = uuid.uuid4
        uuid.uuid4 = lambda: uuid.UUID(int=rng().getrandbits(128), version=4)  # type: ignore[assignment]
        for name, fn in _seeded_secrets(rng).items():
            setattr(secrets, name, fn)
        self._travel = time_machine.travel(FALLBACK_TIME, tick=False)
        self.traveller = self._travel.start()
        self.traveller.__class__ = _CaseClock  # same layout: only ``time_ns`` differs
        self.traveller.tick_ns = self.step // timedelta(microseconds=1) * 1000
        return self

    def case(self, case_id: str, recorded_at: datetime | None, tools: Any = None) -> FrozenClock:
        """Clock at ``recorded_at`` (UTC), ticking with the calls ``tools`` (the case's
        ``VirtualTools``) counts; ``random``/``uuid4``/``secrets`` seeded by the id."""
        start = recorded_at or FALLBACK_TIME
        if start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        self.traveller.tools = tools
        self.traveller.move_to(start.timestamp())  # a float: no time-zone switching
        seed = case_seed(case_id)
        # ``random.seed(seed)`` for an int seed, without its Python-level dispatch
        _seed(_global_random, seed)
        _global_random.gauss_next = None
        self._pending_seed = seed ^ 0x5EED
        return FrozenClock(self.traveller, self.step)

    def __exit__(self, *exc: object) -> None:
        self.traveller.tools = None
        self._travel.stop()
        uuid.uuid4 = self._saved.pop("uuid4")  # type: ignore[assignment]
        for name, fn in self._saved.items():
            setattr(secrets, name, fn)
        random.setstate(self._random_state)


@contextmanager
def deterministic(
    case_id: str, recorded_at: datetime | None, tick_ms: int
) -> Iterator[FrozenClock]:
    """Freeze the clock at ``recorded_at`` and seed randomness from ``case_id`` for the block."""
    with Determinism(tick_ms) as determinism:
        yield determinism.case(case_id, recorded_at)
