"""The planted answers: ``_truth.json`` (summary) and ``_truth.records.jsonl`` (one line a record).

The summary is small whatever the corpus size: counts, broken lines, lost record ids, same-text
pairs, tenants, the opt-out tenant. Everything per record (family, exact-duplicate group, file and
line, funnels by construction, personal values and keys with where they were planted) streams to
the sidecar as records are written, so a 1M-session corpus never holds its truth in memory.
``load_truth`` reads both back for tests (in memory: meant for test-sized corpora).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from golden_distill.synthetic.scenarios import REDACTED

TRUTH_FILE = "_truth.json"
RECORDS_SIDECAR = "_truth.records.jsonl"
TRUTH_FORMAT = "golden-distill-synthetic-truth/1"


@dataclass(frozen=True, slots=True)
class RecordTruth:
    record_id: str
    session_id: str
    tenant_id: str
    file: str
    line: int
    family: str
    exact_group: str | None
    scenario: str
    funnels: tuple[str, ...]
    pii: tuple[tuple[str, str, tuple[str, ...]], ...]  # (entity type, value, where)
    keys: tuple[tuple[str, str], ...]  # (key type, value)


@dataclass
class Truth:
    """What a corpus holds by construction. ``summary`` is the raw ``_truth.json``."""

    summary: dict[str, Any]
    records: dict[str, RecordTruth]

    @property
    def valid_records(self) -> int:
        return int(self.summary["valid_records"])

    @property
    def broken_lines(self) -> list[dict[str, Any]]:
        """``{file, line, reason, record_id}`` for every planted broken line."""
        return list(self.summary["broken_lines"])

    @property
    def quarantine_counts(self) -> dict[str, int]:
        return dict(self.summary["broken_counts"])

    @property
    def oversized_line_limit(self) -> int:
        return int(self.summary["oversized_line_limit"])

    @property
    def lost_record_ids(self) -> list[str]:
        return list(self.summary["lost_record_ids"])

    @property
    def opt_out_tenant(self) -> str:
        return str(self.summary["opt_out_tenant"])

    @property
    def same_text_pairs(self) -> list[tuple[str, str]]:
        return [tuple(p) for p in self.summary["same_text_pairs"]]  # type: ignore[misc]

    def families(self) -> dict[str, list[str]]:
        """family id -> record ids: a partition of every valid record id."""
        out: dict[str, list[str]] = defaultdict(list)
        for r in self.records.values():
            out[r.family].append(r.record_id)
        return dict(out)

    def exact_groups(self) -> dict[str, list[str]]:
        """exact-duplicate group id -> record ids (groups with at least two members)."""
        out: dict[str, list[str]] = defaultdict(list)
        for r in self.records.values():
            if r.exact_group:
                out[r.exact_group].append(r.record_id)
        return {k: v for k, v in out.items() if len(v) >= 2}

    def expected_funnels(
        self,
        record_id: str,
        *,
        opt_out_tenants: tuple[str, ...] = (),
        include_redacted: bool = False,
    ) -> set[str]:
        """Funnels a record belongs to under the default config (quotas off).

        ``redacted`` is expected for every record whose tenant is not opted out, provided the
        redaction step verifies it: the generator plants nothing meant to defeat redaction, so a
        record of a kept tenant that fails verification is a redaction finding. Ask for it
        explicitly with ``include_redacted``.
        """
        r = self.records[record_id]
        out = set(r.funnels)
        if include_redacted and r.tenant_id not in opt_out_tenants:
            out.add(REDACTED)
        return out

    def session_funnels(self) -> dict[str, set[str]]:
        """session id -> the selection funnels any of its records (turns) belongs to."""
        out: dict[str, set[str]] = defaultdict(set)
        for r in self.records.values():
            out[r.session_id].update(r.funnels)
        return dict(out)

    def funnel_members(self, funnel: str) -> set[str]:
        return {rid for rid, r in self.records.items() if funnel in r.funnels}


_COUNTERS = ("funnel_counts", "scenario_counts", "tenant_record_counts", "pii_counts",
             "key_counts", "records_per_file")  # fmt: skip


class TruthWriter:
    """Streams one shard's per-record truth to a part file and keeps that shard's counters.

    Shards are generated independently (possibly in parallel processes); ``write_truth`` then
    concatenates the parts in shard order and merges the counters, so the result does not
    depend on how many processes ran.
    """

    def __init__(self, part: Path) -> None:
        self.part = part
        self._fh: IO[bytes] = part.open("wb")
        self.valid_records = 0
        self.exact_members = 0
        self.families = 0
        self.counters: dict[str, Counter[str]] = {name: Counter() for name in _COUNTERS}
        self.broken: list[dict[str, Any]] = []
        self.lost: list[str] = []
        self.pairs: list[list[str]] = []

    def record(
        self,
        *,
        record_id: str,
        session_id: str,
        tenant_id: str,
        file: str,
        line: int,
        family: str,
        exact_group: str | None,
        scenario: str,
        funnels: tuple[str, ...],
        pii: list[list[Any]],
        keys: list[list[str]],
    ) -> None:
        self._fh.write(
            orjson.dumps(
                {
                    "recordId": record_id,
                    "sessionId": session_id,
                    "tenantId": tenant_id,
                    "file": file,
                    "line": line,
                    "family": family,
                    "exactGroup": exact_group,
                    "scenario": scenario,
                    "funnels": list(funnels),
                    "pii": pii,
                    "keys": keys,
                }
            )
            + b"\n"
        )
        c = self.counters
        self.valid_records += 1
        c["funnel_counts"].update(funnels)
        c["scenario_counts"][scenario] += 1
        c["tenant_record_counts"][tenant_id] += 1
        c["records_per_file"][file] += 1
        c["pii_counts"].update(p[0] for p in pii)
        c["key_counts"].update(k[0] for k in keys)
        if exact_group:
            self.exact_members += 1

    def broken_line(self, *, file: str, line: int, reason: str, record_id: str | None) -> None:
        self.broken.append({"file": file, "line": line, "reason": reason, "record_id": record_id})

    def close(self) -> dict[str, Any]:
        """Close the part; the shard's counters as plain data (picklable across processes)."""
        self._fh.close()
        return {
            "part": str(self.part),
            "valid_records": self.valid_records,
            "exact_group_members": self.exact_members,
            "family_count": self.families,
            "counters": {k: dict(v) for k, v in self.counters.items()},
            "broken_lines": self.broken,
            "lost_record_ids": self.lost,
            "same_text_pairs": self.pairs,
        }


def write_truth(out_dir: Path, states: list[dict[str, Any]], head: dict[str, Any]) -> dict:
    """Concatenate the shards' parts into the sidecar and write the merged ``_truth.json``."""
    with (out_dir / RECORDS_SIDECAR).open("wb") as out:
        for state in states:
            part = Path(state["part"])
            with part.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    out.write(chunk)
            part.unlink()
    merged: dict[str, Counter[str]] = {name: Counter() for name in _COUNTERS}
    for state in states:
        for name in _COUNTERS:
            merged[name].update(state["counters"][name])
    broken = sorted(
        (b for s in states for b in s["broken_lines"]), key=lambda b: (b["file"], b["line"])
    )
    summary = {
        "format": TRUTH_FORMAT,
        **head,
        "valid_records": sum(s["valid_records"] for s in states),
        "records_sidecar": RECORDS_SIDECAR,
        "broken_lines": broken,
        "broken_counts": dict(sorted(Counter(b["reason"] for b in broken).items())),
        "lost_record_ids": [r for s in states for r in s["lost_record_ids"]],
        "family_count": sum(s["family_count"] for s in states),
        "exact_group_members": sum(s["exact_group_members"] for s in states),
        "same_text_pairs": [p for s in states for p in s["same_text_pairs"]],
        **{name: dict(sorted(merged[name].items())) for name in _COUNTERS},
    }
    (out_dir / TRUTH_FILE).write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    return summary


def load_truth(out_dir: Path | str) -> Truth:
    out_dir = Path(out_dir)
    summary = orjson.loads((out_dir / TRUTH_FILE).read_bytes())
    records: dict[str, RecordTruth] = {}
    with (out_dir / summary["records_sidecar"]).open("rb") as fh:
        for line in fh:
            d = orjson.loads(line)
            records[d["recordId"]] = RecordTruth(
                record_id=d["recordId"],
                session_id=d["sessionId"],
                tenant_id=d["tenantId"],
                file=d["file"],
                line=d["line"],
                family=d["family"],
                exact_group=d["exactGroup"],
                scenario=d["scenario"],
                funnels=tuple(d["funnels"]),
                pii=tuple((p[0], p[1], tuple(p[2])) for p in d["pii"]),
                keys=tuple((k[0], k[1]) for k in d["keys"]),
            )
    return Truth(summary=summary, records=records)
