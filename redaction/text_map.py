"""Text rewritten for detection, and the way back: output positions -> original spans.

Every decoding layer (``normalise.py``, ``decode_layers.py``) rewrites a text piece by piece
with a ``Builder``; the ``Mapping`` it returns tells, for any span of the output, which span of
its input it came from. A piece copied as it is maps character for character (linear); a
decoded piece (a base64 blob, a ``%XX`` run, a tag-split address) maps to its *whole* input
span, so a finding anywhere inside it replaces all of it.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mapping:
    """Output position -> input span: segments ``(out_start, out_len, in_start, in_end,
    linear)``; a linear segment maps character for character, others to their whole span."""

    starts: list[int]
    segments: list[tuple[int, int, int, int, bool]]

    def span(self, start: int, end: int) -> tuple[int, int]:
        lo, hi = self._one(start, True), self._one(max(end - 1, start), False)
        return lo, hi

    def _one(self, pos: int, left: bool) -> int:
        i = max(bisect_right(self.starts, pos) - 1, 0)
        out_start, _out_len, in_start, in_end, linear = self.segments[i]
        if linear:
            p = in_start + (pos - out_start)
            return p if left else p + 1
        return in_start if left else in_end


class Builder:
    """Collects output pieces with the input span each came from."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.segments: list[tuple[int, int, int, int, bool]] = []
        self.length = 0

    def add(self, text: str, in_start: int, in_end: int, linear: bool) -> None:
        if not text:
            return
        self.parts.append(text)
        self.starts.append(self.length)
        self.segments.append((self.length, len(text), in_start, in_end, linear))
        self.length += len(text)

    def done(self) -> tuple[str, Mapping]:
        if not self.segments:  # everything removed: one empty segment keeps lookups valid
            self.segments.append((0, 0, 0, 0, False))
            self.starts.append(0)
        return "".join(self.parts), Mapping(self.starts, self.segments)
