"""The flow's redaction task decides collisions batch by batch (``RunCoveredGuard``) and holds
one batch at a time; its decisions and output equal the eager two-pass guard's, and it falls
back to that guard when the run's key digests do not cover the table or two widening chains
meet out of sorted order."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.redaction import shard
from golden_distill.redaction.collisions import CollisionGuard, NotCovered, RunCoveredGuard
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.key_digests import RunKeys, digest_array, key_digest
from golden_distill.redaction.key_rules import KeyRule, RuleMatcher
from golden_distill.redaction.key_scan import KeyScanner
from golden_distill.redaction.pseudonym import key_pseudonym
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

TENANT = RuleMatcher(RedactionConfig()).key_rules["tenant"]
SECRET = b"one-pass-test-Qw3Er7Ty1Ui5Op9As2Df6Gh0Jk4Lz8Xc"


def _run_keys(values: list[str], rule: KeyRule = TENANT) -> RunKeys:
    kt, prefix = rule.key_type, rule.prefix
    return RunKeys(
        originals=digest_array(key_digest(SECRET, kt, v) for v in values),
        bases=digest_array(
            key_digest(SECRET, kt, key_pseudonym(v, kt, SECRET, prefix)) for v in values
        ),
    )


def _same_decisions(eager: CollisionGuard, lazy: CollisionGuard, values: list[str]) -> None:
    assert [lazy.widen(v, "tenant") for v in values] == [eager.widen(v, "tenant") for v in values]
    assert lazy.widened == eager.widened
    for part in ("plain", "widened", "widened_bases", "skipped"):
        assert np.array_equal(getattr(lazy.published, part), getattr(eager.published, part))
    assert lazy.published.run_fingerprint == eager.published.run_fingerprint


def test_batch_by_batch_decisions_equal_the_eager_guards() -> None:
    rng = random.Random(11)
    numbers = rng.sample(range(1000), 700)
    table = [f"tenant-{i:03d}" for i in numbers[:450]]  # hundreds of tenants, 3-digit space
    other = [f"tenant-{i:03d}" for i in numbers[400:]]  # another table's (50 shared)
    run = _run_keys(table + other)
    eager = CollisionGuard(SECRET, [(v, TENANT) for v in table], run)
    assert eager.widened > 100  # forced collisions: with 70% of the space in use, many
    lazy = RunCoveredGuard(SECRET, run)
    order = table * 2  # every tenant in two cases, in no sorted order, batches of 37
    rng.shuffle(order)
    for at in range(0, len(order), 37):
        lazy.add([(v, TENANT) for v in order[at : at + 37]])
    _same_decisions(eager, lazy, table)
    assert lazy.uncovered == 0
    final = {
        v: key_pseudonym(v, "tenant", SECRET, TENANT.prefix, lazy.widen(v, "tenant")) for v in table
    }
    assert len(set(final.values())) == len(table)  # never shared
    assert not set(final.values()) & set(table + other)  # never an original of the run


def test_an_original_the_run_keys_miss_is_not_covered() -> None:
    lazy = RunCoveredGuard(SECRET, _run_keys(["tenant-001", "tenant-002"]))
    lazy.add([("tenant-001", TENANT)])
    with pytest.raises(NotCovered):
        lazy.add([("tenant-002", TENANT), ("tenant-003", TENANT)])


def _meeting_chains() -> tuple[str, str, RunKeys]:
    """``tenant-12`` widened twice and ``tenant-120`` widened once both give the permutation of
    ``1200``: both widened (their base pseudonyms are originals of the run)."""
    short, long = "tenant-12", "tenant-120"
    base = {v: key_pseudonym(v, "tenant", SECRET, TENANT.prefix) for v in (short, long)}
    assert key_pseudonym(short, "tenant", SECRET, TENANT.prefix, 2) == key_pseudonym(
        long, "tenant", SECRET, TENANT.prefix, 1
    )  # the premise
    return short, long, _run_keys([short, long, *base.values()])


def test_widening_chains_met_out_of_sorted_order_give_up() -> None:
    short, long, run = _meeting_chains()
    eager = CollisionGuard(SECRET, [(short, TENANT), (long, TENANT)], run)
    assert eager.widen(short, "tenant") == 2 and eager.widen(long, "tenant") == 2
    in_order = RunCoveredGuard(SECRET, run)
    in_order.add([(short, TENANT)])
    in_order.add([(long, TENANT)])
    _same_decisions(eager, in_order, [short, long])
    reversed_order = RunCoveredGuard(SECRET, run)
    reversed_order.add([(long, TENANT)])  # takes 1200's permutation, eager's for tenant-12
    with pytest.raises(NotCovered):
        reversed_order.add([(short, TENANT)])


def _table(make_case, tenants: list[str], start: int = 0) -> pa.Table:
    rows = [
        make_case(case_id=f"c_{start + n:024x}", tenant_id=t, user_input=f"account of {t} please")
        for n, t in enumerate(tenants)
    ]
    return pa.Table.from_pylist(rows, schema=CASE_SCHEMA)


def _key_pass(redactor: Redactor, table: pa.Table) -> RunKeys:
    return RunKeys.merge(
        [KeyScanner(redactor.config, redactor.key.secret).digests(table.to_pylist())]
    )


def _spy(redactor: Redactor, monkeypatch) -> list[str]:
    calls: list[str] = []
    prepare, redact_many = Redactor.prepare, Redactor.redact_many

    def spy_prepare(self, rows, findings):
        calls.append(f"prepare {len(rows)}")
        return prepare(self, rows, findings)

    def spy_redact(self, rows, *args, **kwargs):
        calls.append(f"redact {len(rows)}")
        return redact_many(self, rows, *args, **kwargs)

    monkeypatch.setattr(Redactor, "prepare", spy_prepare)
    monkeypatch.setattr(Redactor, "redact_many", spy_redact)
    return calls


def _two_pass(table: pa.Table, redactor: Redactor, batch: int, run: RunKeys | None):
    return shard._redact_two_pass(table, redactor, batch, run, redactor.findings_cache())


def _assert_same(one, two) -> None:
    assert one.table.equals(two.table)
    assert one.quarantined == two.quarantined
    assert (one.entity_counts, one.reasons, one.inventory) == (
        two.entity_counts,
        two.reasons,
        two.inventory,
    )
    assert one.uncovered_keys == two.uncovered_keys
    for part in ("plain", "widened", "widened_bases", "skipped"):
        a, b = getattr(one.published_keys, part), getattr(two.published_keys, part)
        assert np.array_equal(a, b)


def test_one_pass_holds_one_batch_and_redacts_as_two_passes(
    make_case, redactor: Redactor, monkeypatch
) -> None:
    rng = random.Random(4)
    numbers = rng.sample(range(1000), 500)
    mine = [f"tenant-{i:03d}" for i in numbers[:300]]
    table = _table(make_case, mine * 2 + ["t-optout"])  # a refused case too
    run = RunKeys.merge(
        [
            _key_pass(redactor, table),
            _key_pass(
                redactor, _table(make_case, [f"tenant-{i:03d}" for i in numbers[250:]], 5000)
            ),
        ]
    )
    calls = _spy(redactor, monkeypatch)
    one = redact_table(table, redactor, batch_cases=150, run_keys=run)
    # each batch is redacted before the next one is prepared: one batch alive at a time
    assert calls == ["prepare 150", "redact 150"] * 4 + ["prepare 1", "redact 1"]
    calls.clear()
    two = _two_pass(table, redactor, 150, run)
    assert calls == ["prepare 150"] * 4 + ["prepare 1"] + ["redact 150"] * 4 + ["redact 1"]
    _assert_same(one, two)
    assert one.published_keys.widened.size > 50  # collisions were forced
    assert one.uncovered_keys == 0 and len(one.quarantined) == 1
    out = one.table.column("tenant_id").to_pylist()
    assert len(set(out)) == 300 and not set(out) & set(mine)


def test_a_key_the_run_keys_miss_falls_back_to_two_passes(
    make_case, redactor: Redactor, monkeypatch
) -> None:
    tenants = [f"tenant-{i:03d}" for i in random.Random(6).sample(range(1000), 200)]
    table = _table(make_case, tenants)
    run = _key_pass(redactor, _table(make_case, tenants[:150]))  # the last 50 are not covered
    calls = _spy(redactor, monkeypatch)
    one = redact_table(table, redactor, batch_cases=100, run_keys=run)
    # batch 1 was redacted, batch 2's keys were not covered: the table is done again eagerly
    assert (
        calls
        == ["prepare 100", "redact 100", "prepare 100"] + ["prepare 100"] * 2 + ["redact 100"] * 2
    )
    _assert_same(one, _two_pass(table, redactor, 100, run))
    assert one.uncovered_keys == 50


def test_chains_met_out_of_order_in_a_table_fall_back(make_case, redactor: Redactor) -> None:
    secret, prefix = redactor.key.secret, TENANT.prefix
    short, long = "tenant-12", "tenant-120"
    table = _table(make_case, [long, short])  # batch 1: tenant-120, batch 2: tenant-12
    bases = [key_pseudonym(v, "tenant", secret, prefix) for v in (short, long)]
    run = RunKeys.merge(
        [_key_pass(redactor, table), _key_pass(redactor, _table(make_case, bases, 50))]
    )
    one = redact_table(table, redactor, batch_cases=1, run_keys=run)
    _assert_same(one, _two_pass(table, redactor, 1, run))
    assert one.uncovered_keys == 0 and len(one.published_keys.widened) == 2
    out = one.table.column("tenant_id").to_pylist()
    assert out[1] == key_pseudonym(short, "tenant", secret, prefix, 2)  # eager's, sorted first
