"""How many of the machine's cores were busy in each phase of a run, and how much core time idled.

A run's wall time is its CPU time over the cores it kept busy. The stage timings in the
manifest say how long each stage took, not whether it used both cores; this says so, per phase
(start-up, shards, select, key pass, redaction, publish to the end), from the machine's
``/proc/stat`` sampled during the run and the phase boundaries in the run's Prefect database
(the first start and last end of each kind of task). Machine-wide: anything else running on the
machine counts as busy. Linux only (elsewhere: no report).
"""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

#: Phases in run order: (name, the task-name prefixes that start it).
PHASES = (
    ("shards", ("shard",)),
    ("select", ("select",)),
    ("keys", ("collect", "keys")),  # the key pass (later rounds' small ones: in redact)
    ("redact", ("redact",)),
    ("publish", ("publish",)),
)


def machine_cpu_seconds() -> dict[str, float] | None:
    """The machine's CPU seconds so far by kind, summed over its cores (``/proc/stat``'s
    first line: user, nice, system, idle, iowait, irq, softirq, steal); None off Linux."""
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1 : 1 + len(names)]
        ticks = os.sysconf("SC_CLK_TCK")
        return {name: int(value) / ticks for name, value in zip(names, fields, strict=True)}
    except (OSError, ValueError):
        return None


def _busy_seconds() -> float | None:
    """CPU seconds the machine's cores spent busy so far (user, nice, system, irq, softirq)."""
    cpu = machine_cpu_seconds()
    if cpu is None:
        return None
    return sum(cpu[k] for k in ("user", "nice", "system", "irq", "softirq"))


class CoreUse:
    """Samples of (time, busy CPU seconds) over one run; ``report`` splits them by phase."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []

    def sample(self) -> None:
        busy = _busy_seconds()
        if busy is not None:
            self.samples.append((time.time(), busy))

    def report(self, prefect_db: Path) -> str | None:
        """One line per phase: its wall seconds, the cores busy on average, the idle core
        seconds; None without samples or a readable database."""
        starts = _phase_starts(prefect_db)
        if len(self.samples) < 2 or not starts:
            return None
        cores = os.cpu_count() or 1
        first, last = self.samples[0][0], self.samples[-1][0]
        bounds = [("start-up", first)] + [(n, min(last, max(first, t))) for n, t in starts]
        bounds.append(("", last))
        lines, idle_total = [], 0.0
        for (name, begin), (_, end) in pairwise(bounds):
            if end <= begin:
                continue
            busy = self._busy_between(begin, end)
            idle = max(0.0, cores * (end - begin) - busy)
            idle_total += idle
            lines.append(
                f"    {name:12s} {end - begin:7.1f} s  {busy / (end - begin):4.2f} of {cores} "
                f"cores busy  {idle:6.1f} core-s idle"
            )
        if not lines:
            return None
        lines[-1] += "  (until the run exits)"
        head = f"  cores busy by phase (machine-wide; {idle_total:.1f} core-s idle in all):"
        return "\n".join([head, *lines])

    def _busy_between(self, begin: float, end: float) -> float:
        return _busy_at(self.samples, end) - _busy_at(self.samples, begin)


def _busy_at(samples: list[tuple[float, float]], moment: float) -> float:
    """Busy seconds at ``moment``, interpolated between the samples around it."""
    if moment <= samples[0][0]:
        return samples[0][1]
    for (t0, b0), (t1, b1) in pairwise(samples):
        if moment <= t1:
            return b0 + (b1 - b0) * (moment - t0) / max(t1 - t0, 1e-9)
    return samples[-1][1]


def _phase_starts(prefect_db: Path) -> list[tuple[str, float]]:
    """Each phase's first task start (epoch seconds), in run order; phases without tasks are
    left out."""
    if not prefect_db.exists():
        return []
    with sqlite3.connect(f"file:{prefect_db}?mode=ro", uri=True) as db:
        rows = db.execute("select name, start_time from task_run where start_time is not null")
        found: dict[str, float] = {}
        for name, start in rows:
            moment = datetime.fromisoformat(str(start)).replace(tzinfo=UTC).timestamp()
            for phase, prefixes in PHASES:
                if str(name).startswith(prefixes):
                    found[phase] = min(found.get(phase, moment), moment)
    return sorted(found.items(), key=lambda item: item[1])
