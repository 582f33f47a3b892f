"""flows/lean_helpers.py: a body runs in a helper process without Prefect while a pool is
active, in the caller otherwise; errors come back as they were raised; a helper that dies fails
only its call and the pool is replaced for the next. No Prefect import here on purpose: helpers
import this module to find the bodies."""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pytest
from malloc_probe import where_a_block_after_a_larger_one_comes_from

from golden_distill.flows.errors import StageError
from golden_distill.flows.lean_helpers import LeanHelpers, in_helper


def _where() -> tuple[int, bool, bool]:
    """(pid, Prefect loaded, the redaction body's module loaded without loading Prefect)."""
    before = "prefect" in sys.modules
    import golden_distill.flows.tasks.redact_body  # noqa: F401  (what redaction helpers import)

    return os.getpid(), before, "prefect" in sys.modules


def _tokens_cached_then_add(value: str) -> tuple[int, int]:
    """(pid, pseudonymised values this process had cached before this call), then one more."""
    from golden_distill.redaction.pseudonym import value_token

    before = value_token.cache_info().currsize
    value_token(value, "PERSON", b"k" * 32)
    return os.getpid(), before


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


def test_no_value_a_call_saw_is_cached_for_the_next() -> None:
    """The helper empties the caches of values after each call (redaction/process_caches.py):
    the second call on the same helper finds none of the first call's values."""
    with LeanHelpers(1):
        first_pid, _ = in_helper(_tokens_cached_then_add, "Marta Quenby")
        second_pid, cached = in_helper(_tokens_cached_then_add, "Ada Byron")
    assert first_pid == second_pid != os.getpid()
    assert cached == 0
    _, here = in_helper(_tokens_cached_then_add, "Marta Quenby")  # no pool: in this process,
    _, again = in_helper(_tokens_cached_then_add, "Ada Byron")  # where caches are kept
    assert again == here + 1


@pytest.mark.skipif(
    not hasattr(ctypes.CDLL(ctypes.util.find_library("c")), "mallinfo2"), reason="glibc only"
)
def test_a_helper_maps_large_blocks_whatever_it_freed_before() -> None:
    """A helper fixes glibc's mmap threshold (flows/memory.py ``fix_mmap_threshold``), so a
    task's large buffers go back to the system when freed; a plain process keeps the default."""
    with LeanHelpers(1):
        in_a_helper = in_helper(where_a_block_after_a_larger_one_comes_from)
    assert in_a_helper.mapped >= 2_000_000 and in_a_helper.heap_growth < 1_000_000
    plain = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    with plain:
        in_plain = plain.submit(where_a_block_after_a_larger_one_comes_from).result()
    assert in_plain.mapped == 0 and in_plain.heap_growth >= 1_000_000
