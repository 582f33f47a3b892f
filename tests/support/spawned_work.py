"""Functions a spawned helper process can import by name (tests of datasets/front_and_back.py)."""

from __future__ import annotations

import os


def power_and_pid(item: int, exponent: int) -> tuple[int, int]:
    """``item ** exponent`` and the process that computed it."""
    if item < 0:
        raise ValueError(f"negative item {item}")
    return item**exponent, os.getpid()
