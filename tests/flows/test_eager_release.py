"""`golden run`'s process hands polars' freed memory back at once (flows/memory.py), without
passing the setting on to the processes it starts."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import os, psutil
from golden_distill.flows.memory import eager_release_here
{setup}
import polars as pl
proc = psutil.Process()
frame = pl.DataFrame({{"x": range(20_000_000)}})
held = proc.memory_info().rss
del frame
pl.Series([1])
print(held - proc.memory_info().rss, "_RJEM_MALLOC_CONF" in os.environ)
"""


def _freed(setup: str) -> tuple[int, bool]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(setup=setup)],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"},
    ).stdout.split()
    return int(out[0]), out[1] == "True"


def test_freed_frames_leave_the_process_and_children_keep_the_default():
    freed, inherited = _freed("eager_release_here()")
    assert freed > 100_000_000  # the 160 MB frame is given back
    assert not inherited  # processes started later get the environment as it was
    kept, _ = _freed("")
    assert kept < freed / 4  # the default keeps it: what the call changes
