"""What a source adapter is, and the registry `golden ingest` picks adapters from.

An adapter turns one kind of recording into canonical case rows (dicts in ``CASE_SCHEMA`` shape),
streaming: it yields one case at a time and never holds a whole input in memory. Anything it
cannot turn into a case goes to the ``Quarantine`` it is given, with location and reason; it never
raises on one bad record. It raises ``SourceError`` only when the whole input is unusable (missing
file, unknown database), with a message that names the input and what to do.

Registering: add the adapter class to ``ADAPTERS`` in ``registry.py`` (one line).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from golden_distill.datasets.quarantine import Quarantine


class SourceError(RuntimeError):
    """An input that cannot be read at all. The message names the input, never record text."""


@dataclass
class ReadStats:
    """What one adapter read from one input (merged across inputs by the ingest runner)."""

    records_read: int = 0
    cases: int = 0
    bytes_read: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def merge(self, other: ReadStats) -> None:
        self.records_read += other.records_read
        self.cases += other.cases
        self.bytes_read += other.bytes_read
        for k, v in other.extra.items():
            self.extra[k] = self.extra.get(k, 0) + v


class SourceAdapter(Protocol):
    #: the `--format` name: native | chat | evidence | otel
    format: ClassVar[str]

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """True when ``uri`` (first bytes ``head``; empty for databases) looks like ours."""
        ...

    def read(
        self, uri: str, quarantine: Quarantine, stats: ReadStats, name: str = ""
    ) -> Iterator[dict[str, Any]]:
        """Yield canonical case rows; quarantine what cannot be read; update ``stats``.

        ``name`` is the input's name inside its source (``identity.source_name``; the base name
        when empty): a format whose runs carry no id derives case ids from it and the position,
        so same-named files of different partitions never share an id."""
        ...
