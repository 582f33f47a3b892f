"""Generated recordings written as nightly date partitions (`dt=YYYY-MM-DD/`), for the tests of
scheduled and incremental runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson

NIGHTS = ("2026-11-28", "2026-11-29", "2026-11-30")


def split_into_nights(corpus: Path, truth, out: Path) -> dict[str, str]:
    """Write the corpus's plain recording files as three nightly partitions; record id ->
    night. A family's members go to nights in turn, so most families span nights."""
    family_seen: Counter[str] = Counter()
    night_of: dict[str, str] = {}
    lines: dict[str, list[bytes]] = {night: [] for night in NIGHTS}
    for path in sorted(corpus.glob("recordings-*.jsonl")):
        for raw in path.read_bytes().splitlines():
            try:
                record = orjson.loads(raw)
                rid = record["recordId"]
                family = truth.records[rid].family
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue  # planted broken lines: not part of this test
            night = NIGHTS[family_seen[family] % len(NIGHTS)]
            family_seen[family] += 1
            record["recordedAt"] = f"{night}T{record['recordedAt'].split('T', 1)[1]}"
            lines[night].append(orjson.dumps(record))
            night_of[rid] = night
    for night, rows in lines.items():
        folder = out / f"dt={night}"
        folder.mkdir(parents=True)
        (folder / "recordings.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    return night_of
