"""flows/lean_helpers.py: a body runs in a helper process without Prefect while a pool is
active, in the caller otherwise; errors come back as they were raised; a helper that dies fails
only its call and the pool is replaced for the next. No Prefect import here on purpose: helpers
import this module to find the bodies."""

from __future__ import annotations

import os
import sys
from concurrent.futures.process import BrokenProcessPool

import pytest

from golden_distill.flows.errors import StageError
from golden_distill.flows.lean_helpers import LeanHelpers, in_helper


def _where() -> tuple[int, bool, bool]:
    """(pid, Prefect loaded, the redaction body's module loaded without loading Prefect)."""
    before = "prefect" in sys.modules
    import golden_distill.flows.tasks.redact_body  # noqa: F401  (what redaction helpers import)

    return os.getpid(), before, "prefect" in sys.modules


def _fail() -> None:
    raise StageError("redact", "shard s-1: refused")


def _die() -> None:
    os._exit(3)


def test_without_a_pool_the_body_runs_in_the_caller() -> None:
    pid, _, _ = in_helper(_where)
    assert pid == os.getpid()


def test_in_a_pool_the_body_runs_in_a_helper_without_prefect() -> None:
    with LeanHelpers(2):
        pids = {in_helper(_where) for _ in range(4)}
    assert all(pid != os.getpid() for pid, _, _ in pids)
    assert all(not before and not after for _, before, after in pids)  # Prefect never loaded
    pid, _, _ = in_helper(_where)  # the block ended: here again
    assert pid == os.getpid()


def test_a_body_error_comes_back_as_raised() -> None:
    with LeanHelpers(1), pytest.raises(StageError) as caught:
        in_helper(_fail)
    assert caught.value.stage == "redact" and caught.value.detail == "shard s-1: refused"


def test_a_dead_helper_fails_its_call_and_the_next_call_gets_a_new_pool() -> None:
    with LeanHelpers(1) as helpers:
        first, _, _ = in_helper(_where)
        with pytest.raises(BrokenProcessPool):
            in_helper(_die)
        again, _, _ = in_helper(_where)
        assert helpers.replaced == 1
    assert os.getpid() not in (first, again) and first != again  # a new helper process


def test_one_pool_at_a_time() -> None:
    with LeanHelpers(1), pytest.raises(RuntimeError, match="already active"), LeanHelpers(1):
        pass
