"""Base pseudonyms the key pass already computed, handed to the redaction of the same shard.

The key pass (``key_scan.KeyScanner.digests``) computes every chosen key's base pseudonym to
report its digest; the redaction task of the same shard needs the same pseudonyms again (its
collision guard decides each key, then every occurrence is replaced) and computed them a second
time: ~16 us each, ~2.6% of a shard's redaction CPU (bench/redaction_cpu.py).

What is handed over holds no original: per (key type, configured prefix), the keyed digest of
an original (16 bytes of its HMAC, ``key_digests.key_digest_wide``) with its base pseudonym
(what gets published) and that pseudonym's digest. Redaction computes the digest of each key it
finds anyway (the run-wide coverage check) and looks the pseudonym up; a key the file does not
hold, or a missing file, is computed as before, so the hand-over only ever saves time. A
16-byte digest makes two originals sharing an entry a 2^-128 event per pair.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa

#: One entry: (key type, configured prefix or None, wide digest of the original, base
#: pseudonym, digest of the base pseudonym)
Entry = tuple[str, str | None, bytes, str, int]

_SCHEMA = pa.schema(
    [
        ("key_type", pa.string()),
        ("prefix", pa.string()),
        ("digest", pa.binary(16)),
        ("base", pa.string()),
        ("base_digest", pa.uint64()),
    ]
)


@dataclass
class KnownBases:
    """Base pseudonyms (and their digests) by key type, prefix and the original's digest."""

    by_rule: dict[tuple[str, str | None], dict[bytes, tuple[str, int]]] = field(
        default_factory=dict
    )

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> KnownBases:
        known = cls()
        for key_type, prefix, digest, base, base_digest in entries:
            known.by_rule.setdefault((key_type, prefix), {})[digest] = (base, base_digest)
        return known

    def __len__(self) -> int:
        return sum(len(found) for found in self.by_rule.values())

    def for_rule(self, key_type: str, prefix: str | None) -> dict[bytes, tuple[str, int]]:
        return self.by_rule.get((key_type, prefix), {})

    def to_bytes(self) -> bytes:
        """An Arrow IPC stream (the key pass writes one per shard)."""
        columns: list[list] = [[], [], [], [], []]
        for (key_type, prefix), found in self.by_rule.items():
            for digest, (base, base_digest) in found.items():
                for column, value in zip(
                    columns, (key_type, prefix, digest, base, base_digest), strict=True
                ):
                    column.append(value)
        table = pa.Table.from_arrays(
            [pa.array(c, type=f.type) for c, f in zip(columns, _SCHEMA, strict=True)],
            schema=_SCHEMA,
        )
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, _SCHEMA) as writer:
            writer.write_table(table)
        return sink.getvalue().to_pybytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> KnownBases:
        table = pa.ipc.open_stream(data).read_all()
        if table.schema != _SCHEMA:
            raise ValueError("not a key pass's base pseudonyms file")
        return cls.of(zip(*(table.column(f.name).to_pylist() for f in _SCHEMA), strict=True))
