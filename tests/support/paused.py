"""Waiting for a real publishing process to stop at a publish step (``GOLDEN_PUBLISH_PAUSED``).

``datasets/store/publish.py`` prints ``GOLDEN_PUBLISH_PAUSED <point>`` on stderr and waits when
the test asks it to pause there; tests then kill it, race it, or let it go on.
"""

from __future__ import annotations

import select
import subprocess
import time

import pytest


def wait_paused(proc: subprocess.Popen[str], point: str, timeout: float = 240) -> None:
    """Read ``proc``'s stderr until it pauses at ``point``; fail the test if it exits first or
    does not get there within ``timeout`` seconds (then it is killed)."""
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if not ready:
            continue
        line = proc.stderr.readline()  # type: ignore[union-attr]
        if not line:
            pytest.fail(f"process exited before pausing at {point}: {''.join(seen)[-3000:]}")
        seen.append(line)
        if line.strip() == f"GOLDEN_PUBLISH_PAUSED {point}":
            return
    proc.kill()
    pytest.fail(f"process did not reach {point} within {timeout}s")
