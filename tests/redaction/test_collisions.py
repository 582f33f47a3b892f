"""Pseudonyms never collide: a keyed permutation per key type and shape, plus a table-wide guard
that widens any pseudonym equal to another original (tested in a three-digit key space)."""

from __future__ import annotations

import random
import re

import numpy as np
import pyarrow as pa

from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.redaction.collisions import CollisionGuard
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.key_digests import RunKeys, needs_redo
from golden_distill.redaction.key_rules import KeyRule, RuleMatcher
from golden_distill.redaction.key_scan import KeyScanner
from golden_distill.redaction.pseudonym import key_pseudonym
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

_TENANT = RuleMatcher(RedactionConfig()).key_rules["tenant"]
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


def _key_pass(redactor: Redactor, table: pa.Table):
    return KeyScanner(redactor.config, redactor.key.secret).digests(table.to_pylist())


def test_run_keys_settle_collisions_across_tables_in_one_pass(
    make_case, redactor: Redactor
) -> None:
    rng = random.Random(5)
    numbers = rng.sample(range(1000), 300)
    shard_a = [f"tenant-{i:03d}" for i in numbers[:160]]
    shard_b = [f"tenant-{i:03d}" for i in numbers[140:]]  # 20 tenants in both
    tables = {0: _tenant_table(make_case, shard_a, 0), 1: _tenant_table(make_case, shard_b, 500)}
    originals = set(shard_a) | set(shard_b)

    def pairs(results: dict) -> set[tuple[str, str]]:
        return {
            (before["tenant_id"], after["tenant_id"])
            for i, result in results.items()
            for before, after in zip(tables[i].to_pylist(), result.table.to_pylist(), strict=True)
        }

    # the premise: per-table guards alone publish some real tenant id of the other table
    alone = {i: redact_table(t, redactor) for i, t in tables.items()}
    assert {pseudo for _, pseudo in pairs(alone)} & originals

    run = RunKeys.merge(_key_pass(redactor, t) for t in tables.values())
    assert len(run.originals) >= len(originals)  # a superset: other key types count too
    done = {i: redact_table(t, redactor, run_keys=run) for i, t in tables.items()}
    mapping = dict(pairs(done))
    assert len(mapping) == len(pairs(done))  # the same original: one pseudonym in both tables
    assert set(mapping) == originals
    assert len(set(mapping.values())) == len(originals)  # never shared
    assert not set(mapping.values()) & originals  # never another original of the run
    for result in done.values():
        assert result.uncovered_keys == 0  # the key pass listed every key redaction met
        assert result.published_keys.run_fingerprint == run.fingerprint
        assert not needs_redo(result.published_keys, run)
    # the per-table results would have to be redone under the run's keys
    assert any(needs_redo(r.published_keys, run) for r in alone.values())
    # digests only: no raw key crosses the task boundary
    report = done[0].published_keys
    for part in (report.plain, report.widened, report.widened_bases):
        assert part.dtype == np.uint64
    assert len(report.widened) > 0


def test_a_cached_redaction_stands_unless_new_keys_change_its_decisions(
    make_case, redactor: Redactor
) -> None:
    secret, prefix = redactor.key.secret, _TENANT.prefix
    rng = random.Random(9)
    numbers = rng.sample(range(1000), 400)
    table = _tenant_table(make_case, [f"tenant-{i:03d}" for i in numbers[:200]], 0)
    before = RunKeys.merge([_key_pass(redactor, table)])
    cached = redact_table(table, redactor, run_keys=before).published_keys
    bases = {key_pseudonym(f"tenant-{i:03d}", "tenant", secret, prefix) for i in numbers[:200]}
    rest = [f"tenant-{i:03d}" for i in numbers[200:]]
    # another shard brings a tenant that is one of this table's published pseudonyms
    hit = next(t for t in rest if t in bases)
    other = _tenant_table(make_case, [hit], 900)
    assert needs_redo(cached, RunKeys.merge([before, _key_pass(redactor, other)]))
    # ... or one that none of its decisions depends on: the cached output stands
    widened = {
        key_pseudonym(f"tenant-{i:03d}", "tenant", secret, prefix, k)
        for i in numbers[:200]
        for k in (1, 2)
    }
    free = next(t for t in rest if t not in bases and t not in widened)
    unrelated = _tenant_table(make_case, [free], 950)
    assert not needs_redo(cached, RunKeys.merge([before, _key_pass(redactor, unrelated)]))
