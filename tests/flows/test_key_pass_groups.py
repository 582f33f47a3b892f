"""The key pass runs in a few tasks of several shards each (a shard's key pass costs less than
Prefect's own cost of a task run): every shard in exactly one group, groups balanced by chosen
cases, and a group's cache key changes when any of its shards' chosen cases change."""

from __future__ import annotations

from golden_distill.flows.tasks.jobs import KeysPart
from golden_distill.flows.tasks.keys import KEY_PASS_TASKS_PER_WORKER, group_parts, keys_cache_key


def _part(n: int, cases: int) -> KeysPart:
    ids = tuple(f"c_{n}_{i}" for i in range(cases))
    return KeysPart(f"shard-{n:03d}", f"/w/{n}/candidates.parquet", ids, f"k{n}-{cases}")


def test_every_shard_in_one_balanced_group() -> None:
    parts = [_part(n, 100 + (n * 37) % 400) for n in range(100)]
    groups = group_parts(parts, workers=2)
    assert len(groups) == 2 * KEY_PASS_TASKS_PER_WORKER
    labels = [p.label for g in groups for p in g]
    assert sorted(labels) == sorted(p.label for p in parts)  # each exactly once
    loads = [sum(len(p.case_ids) for p in g) for g in groups]
    assert max(loads) - min(loads) <= max(len(p.case_ids) for p in parts)
    assert group_parts(parts[:3], workers=2) and len(group_parts(parts[:3], workers=2)) == 3
    assert group_parts(list(reversed(parts)), workers=2) == groups  # order-independent


def test_a_groups_cache_key_follows_its_shards() -> None:
    a, b = _part(1, 10), _part(2, 20)
    key = keys_cache_key((a, b))
    assert key == keys_cache_key((a, b))
    assert key != keys_cache_key((a, _part(2, 21)))  # other chosen cases in one shard
    uncacheable = KeysPart("db", "/w/db/candidates.parquet", ("c_1",), None)
    assert keys_cache_key((a, uncacheable)) is None
