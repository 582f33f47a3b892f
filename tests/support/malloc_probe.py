"""What glibc's malloc serves from its own mappings (``mallinfo2``), to test where a process's
large blocks come from (flows/memory.py ``fix_mmap_threshold``)."""

from __future__ import annotations

import ctypes
import ctypes.util


class _MallInfo2(ctypes.Structure):
    _fields_ = [  # glibc's struct mallinfo2, in its order
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def mapped_bytes_of_a_block_after_a_larger_one() -> int:
    """Bytes glibc serves from their own mappings for a 2 MB block, right after a 20 MB block
    was freed (which raises glibc's default, dynamic threshold to 20 MB: the 2 MB then come
    from the heap)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.mallinfo2.restype = _MallInfo2
    larger = bytearray(20_000_000)
    del larger
    before = libc.mallinfo2().hblkhd
    block = bytearray(2_000_000)
    mapped = libc.mallinfo2().hblkhd - before
    del block
    return mapped
