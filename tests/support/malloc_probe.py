"""What glibc's malloc serves from its own mappings (``mallinfo2``), to test where a process's
large blocks come from (flows/memory.py ``fix_mmap_threshold``)."""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass
from pathlib import Path


class _MallInfo2(ctypes.Structure):
    _fields_ = [  # glibc's struct mallinfo2, in its order
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


@dataclass(frozen=True)
class BlockOrigin:
    """Where glibc found a 2 MB block: ``mapped`` bytes came from a mapping of its own,
    ``heap_growth`` bytes from extending a heap (``mallinfo2``'s ``hblkhd`` and ``arena``)."""

    mapped: int
    heap_growth: int


def where_a_block_after_a_larger_one_comes_from() -> BlockOrigin:
    """A 2 MB block, right after a 20 MB block was freed (which raises glibc's default, dynamic
    threshold to 20 MB: in a fresh process the 2 MB then extend the heap)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.mallinfo2.restype = _MallInfo2
    larger = bytearray(20_000_000)
    del larger
    before = libc.mallinfo2()
    block = bytearray(2_000_000)
    after = libc.mallinfo2()
    del block
    return BlockOrigin(after.hblkhd - before.hblkhd, after.arena - before.arena)


def where_a_block_comes_from_while_an_engine_runs(config_path: str) -> BlockOrigin:
    """``where_a_block_after_a_larger_one_comes_from`` inside ``PrefectEngine`` (the flow's
    process while a run is on). Call it in a fresh process: a long-lived one may hold free
    heap that serves the block whatever the threshold."""
    from golden_distill.flows.engine import PrefectEngine
    from golden_distill.flows.params import DistillParams

    sources = [str(Path(config_path).parent)]
    resolved = DistillParams(config_path=config_path, sources=sources).resolve()
    with PrefectEngine(resolved):
        return where_a_block_after_a_larger_one_comes_from()
