"""The key pass hands its base pseudonyms to the redaction of the same table
(``redaction/known_bases.py``): no original in what is handed over, the same published output
with or without it, and the redaction then looks the pseudonyms up instead of computing them."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.redaction.key_digests import (
    DIGEST_BYTES,
    RunKeys,
    key_digest,
    key_digest_wide,
)
from golden_distill.redaction.key_scan import KeyScanner
from golden_distill.redaction.known_bases import Entry, KnownBases
from golden_distill.redaction.pseudonym import key_pseudonym
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table


def _table(make_case, make_step, n: int = 120) -> pa.Table:
    rng = random.Random(3)
    tenants = [f"tenant-{i:03d}" for i in rng.sample(range(1000), 700)]
    rows = [
        make_case(
            case_id=f"c_{i:024x}",
            tenant_id=tenants[i % len(tenants)],
            user_input=f"where is order ORD-{40000 + i}? account of {tenants[(i * 7) % 700]}",
            steps=[
                make_step(0, "get_order", {"order_id": f"ORD-{40000 + i}"}, {"status": "ok"}),
                make_step(1, "get_user", {"user_id": f"noah_brown_{1000 + i}"}, {"ok": True}),
            ],
        )
        for i in range(n)
    ]
    return pa.Table.from_pylist(rows, schema=CASE_SCHEMA)


def _key_pass(redactor: Redactor, table: pa.Table) -> tuple[RunKeys, list[Entry]]:
    entries: list[Entry] = []
    scanner = KeyScanner(redactor.config, redactor.key.secret)
    digests = scanner.digests(table.to_pylist(), entries)
    return RunKeys.merge([digests]), entries


def test_entries_hold_each_keys_base_pseudonym_and_no_original(
    make_case, make_step, redactor: Redactor
) -> None:
    table = _table(make_case, make_step)
    run, entries = _key_pass(redactor, table)
    secret = redactor.key.secret
    scanner = KeyScanner(redactor.config, secret)
    pairs = {pair for row in table.to_pylist() for pair in scanner.keys(row)}
    assert len(entries) == len(pairs) == len(run.originals)
    known = KnownBases.from_bytes(KnownBases.of(entries).to_bytes())  # what the file holds
    assert len(known) == len(pairs)
    for value, rule in pairs:
        wide = key_digest_wide(secret, rule.key_type, value)
        assert int.from_bytes(wide[:DIGEST_BYTES], "big") == key_digest(
            secret, rule.key_type, value
        )
        base, base_digest = known.for_rule(rule.key_type, rule.prefix)[wide]
        assert base == key_pseudonym(value, rule.key_type, secret, rule.prefix)
        assert base_digest == key_digest(secret, rule.key_type, base)
    data = KnownBases.of(entries).to_bytes()
    originals = {value for value, _ in pairs}
    assert "ORD-40000" in originals and "noah_brown_1000" in originals
    # an original's text is there only as another key's base pseudonym (in a small space, a
    # permutation maps some originals onto others, which is why widening exists)
    bases = {entry[3] for entry in entries}
    assert not [v for v in originals if v.encode() in data and v not in bases]
    assert [v for v in originals if v not in bases]  # most are nowhere in it


def test_redaction_with_the_key_pass_bases_publishes_the_same_and_computes_fewer(
    make_case, make_step, redactor: Redactor
) -> None:
    table = _table(make_case, make_step)
    run, entries = _key_pass(redactor, table)
    key_pseudonym.cache_clear()
    without = redact_table(table, redactor, batch_cases=50, run_keys=run)
    computed_without = key_pseudonym.cache_info().misses
    key_pseudonym.cache_clear()
    known = KnownBases.of(entries)
    used = redact_table(table, redactor, batch_cases=50, run_keys=run, known_bases=known)
    computed_with = key_pseudonym.cache_info().misses

    assert used.table.equals(without.table)
    assert used.quarantined == without.quarantined
    assert used.entity_counts == without.entity_counts and used.inventory == without.inventory
    for part in ("plain", "widened", "widened_bases", "skipped"):
        a, b = getattr(used.published_keys, part), getattr(without.published_keys, part)
        assert np.array_equal(a, b)
    assert used.published_keys.widened.size > 0  # the 3-digit tenants forced widenings
    # every base pseudonym came from the key pass: only widenings were computed
    assert computed_without >= len(entries)
    assert computed_with <= used.published_keys.widened.size + used.published_keys.skipped.size


def test_a_key_the_handed_bases_lack_is_computed(make_case, make_step, redactor) -> None:
    table = _table(make_case, make_step)
    run, entries = _key_pass(redactor, table)
    partial = KnownBases.of(e for e in entries if e[0] != "order")  # no order keys handed
    full = redact_table(table, redactor, run_keys=run)
    used = redact_table(table, redactor, run_keys=run, known_bases=partial)
    assert used.table.equals(full.table)
    assert used.uncovered_keys == 0


def test_a_file_of_another_shape_is_refused() -> None:
    other = pa.table({"key_type": ["order"], "value": ["ORD-1"]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, other.schema) as writer:
        writer.write_table(other)
    with pytest.raises(ValueError, match="not a key pass's base pseudonyms file"):
        KnownBases.from_bytes(sink.getvalue().to_pybytes())
    with pytest.raises(pa.ArrowInvalid):
        KnownBases.from_bytes(b"\x00garbage")
