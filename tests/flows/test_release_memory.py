"""``release_memory`` (flows/memory.py): in a worker process the survivors of its collection
leave the collector's generations, so the next task's end does not walk them again; the flow's
own process never freezes anything; a frozen object that dies is still freed."""

from __future__ import annotations

import gc
import weakref
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from golden_distill.flows.memory import release_memory


class _Entry:
    """Stands for a findings memo entry: a small container that outlives a task."""

    def __init__(self, n: int) -> None:
        self.items = [n]


def _in_worker() -> tuple[int, int, bool, int]:
    survivors = [_Entry(n) for n in range(50_000)]  # what a task leaves behind (the memo)
    before = gc.get_freeze_count()
    release_memory()
    frozen = gc.get_freeze_count()
    probe = _Entry(-1)
    survivors.append(probe)
    release_memory()
    dead = weakref.ref(probe)
    survivors.clear()  # a dropped memo generation: reference counting frees it, frozen or not
    del probe
    return before, frozen, dead() is None, gc.collect()


def test_a_worker_freezes_what_survives_and_still_frees_what_dies() -> None:
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        before, frozen, freed, _ = pool.submit(_in_worker).result()
    assert frozen - before >= 50_000  # the survivors are out of the generations
    assert freed


def test_the_flows_own_process_never_freezes() -> None:
    keep = [_Entry(n) for n in range(1_000)]
    before = gc.get_freeze_count()
    release_memory()
    assert gc.get_freeze_count() == before
    assert len(keep) == 1_000
