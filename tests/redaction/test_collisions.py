"""Pseudonyms never collide: a keyed permutation per key type and shape, plus a table-wide guard
that widens any pseudonym equal to another original (tested in a three-digit key space)."""

from __future__ import annotations

import random
import re

import pyarrow as pa

from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.redaction.collisions import CollisionGuard
from golden_distill.redaction.key_digests import tasks_to_redo
from golden_distill.redaction.key_rules import KeyRule
from golden_distill.redaction.pseudonym import key_pseudonym
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

SECRET = b"collision-test-Rt5Yu9Io2Pa6Sd0Fg4Hj8Kl3Zx7Cv1Bn"


def test_base_pseudonyms_are_a_permutation_of_the_key_space() -> None:
    originals = [f"tenant-{i:03d}" for i in range(1000)]
    out = [key_pseudonym(v, "tenant", SECRET, "t-|tenant-") for v in originals]
    assert len(set(out)) == 1000  # one to one
    assert all(re.fullmatch(r"tenant-\d{3,}", p) for p in out)  # format kept
    # a value the permutation would map to itself is widened instead (never published as is)
    assert not [v for v, p in zip(originals, out, strict=True) if v == p]
    assert sum(len(p) > len("tenant-000") for p in out) <= 5


def test_guard_widens_pseudonyms_that_are_other_originals() -> None:
    rule = KeyRule("tenant", "t-|tenant-")
    originals = {f"tenant-{i:03d}" for i in random.Random(7).sample(range(1000), 700)}
    guard = CollisionGuard(SECRET, [(v, rule) for v in originals])
    final = {
        v: key_pseudonym(v, "tenant", SECRET, rule.prefix, guard.widen(v, "tenant"))
        for v in originals
    }
    assert guard.widened > 0  # with 70% of the space in use, many base pseudonyms collide
    assert len(set(final.values())) == len(originals)
    assert not set(final.values()) & originals


def test_hundreds_of_tenants_through_redaction(make_case, redactor: Redactor) -> None:
    rng = random.Random(3)
    tenants = [f"tenant-{i:03d}" for i in rng.sample(range(1000), 400)]
    rows = []
    for n, tenant in enumerate(tenants * 2):  # every tenant in two cases
        rows.append(
            make_case(
                case_id=f"c_{n:024x}",
                tenant_id=tenant,
                user_input=f"please check the account of {tenant} today",
            )
        )
    rows = [r | {"case_id": f"c_{i:024x}"} for i, r in enumerate(rows)]
    table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
    result = redact_table(table, redactor, batch_cases=250)
    out = result.table.to_pylist()
    assert len(out) == len(rows)
    mapping: dict[str, str] = {}
    for before, after in zip(rows, out, strict=True):
        pseudo = after["tenant_id"]
        assert mapping.setdefault(before["tenant_id"], pseudo) == pseudo  # consistent
        assert pseudo in after["user_input"] and before["tenant_id"] not in after["user_input"]
    assert len(set(mapping.values())) == len(tenants)  # never shared
    assert not set(mapping.values()) & set(tenants)  # never another original


def _tenant_table(make_case, tenants: list[str], start: int) -> pa.Table:
    rows = [
        make_case(case_id=f"c_{start + n:024x}", tenant_id=t, user_input=f"account of {t} please")
        for n, t in enumerate(tenants)
    ]
    return pa.Table.from_pylist(rows, schema=CASE_SCHEMA)


def test_run_wide_check_redoes_a_table_whose_pseudonym_is_another_tables_original(
    make_case, redactor: Redactor
) -> None:
    rng = random.Random(5)
    numbers = rng.sample(range(1000), 300)
    shard_a = [f"tenant-{i:03d}" for i in numbers[:160]]
    shard_b = [f"tenant-{i:03d}" for i in numbers[140:]]  # 20 tenants in both
    tables = {0: _tenant_table(make_case, shard_a, 0), 1: _tenant_table(make_case, shard_b, 500)}
    first = {i: redact_table(t, redactor) for i, t in tables.items()}
    run, redo = tasks_to_redo({i: r.key_digests for i, r in first.items()})
    assert redo == [0, 1]  # each table alone publishes some real tenant id of the other

    def pairs(results: dict) -> set[tuple[str, str]]:
        return {
            (before["tenant_id"], after["tenant_id"])
            for i, result in results.items()
            for before, after in zip(tables[i].to_pylist(), result.table.to_pylist(), strict=True)
        }

    originals = set(shard_a) | set(shard_b)
    # first pass (per-table guards only): some published pseudonym is a real tenant of the run
    assert {pseudo for _, pseudo in pairs(first)} & originals
    again = {i: redact_table(tables[i], redactor, run_keys=run) for i in redo}
    mapping = dict(pairs(again))
    assert len(mapping) == len(pairs(again))  # the same original: one pseudonym in both tables
    assert set(mapping) == originals
    assert len(set(mapping.values())) == len(originals)  # never shared
    assert not set(mapping.values()) & originals  # never another original of the run
    _, redo_again = tasks_to_redo({i: r.key_digests for i, r in again.items()})
    assert redo_again == []  # one redo settles it
    # digests only: no raw key crosses the task boundary
    report = again[0].key_digests
    assert report is not None
    everything = [
        d
        for part in (report.originals, report.bases, report.published)
        for ds in part.values()
        for d in ds
    ]
    assert everything and all(isinstance(d, bytes) and len(d) == 16 for d in everything)
    assert not any(t.encode() in d for t in originals for d in everything)
