"""A fixed piece of CPU work, timed: how fast this host is right now.

The same run on the same corpus took 1054 s of CPU at one moment and 650 s twenty minutes later
on this 2-core virtual machine (docs/benchmarks.md, session 20): a neighbour's load or the
host's clock, invisible from inside apart from the time the same work takes. Benchmarks time
this probe next to what they measure, so two figures from different hours can be compared:
a run's time over the probe's is roughly independent of the host's speed at that moment.

The work is what the pipeline's hot paths do most (regex search over short text, JSON
encoding, dict and string building), single-threaded, about a second on a quiet host.

    .venv/bin/python bench/host_probe.py   # prints the probe's CPU seconds
"""

from __future__ import annotations

import json
import re
import time

_PATTERN = re.compile(r"\d{3}[-. ]\d{4}")
_TEXT = "call 555-1234 or 555.9876 today " * 50


def _work(rounds: int) -> int:
    total = 0
    for i in range(rounds):
        total += len(_PATTERN.findall(_TEXT))
        total += len(json.dumps({"a": i, "b": [i, str(i)], "c": {"d": f"x{i}"}}))
    return total


def probe_seconds(rounds: int = 40_000) -> float:
    """CPU seconds of the fixed work (the best of three: a probe measures the host, not a
    scheduling hiccup)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        _work(rounds)
        best = min(best, time.process_time() - started)
    return best


if __name__ == "__main__":
    print(f"host probe {probe_seconds():.2f} s of CPU (lower is faster)")
