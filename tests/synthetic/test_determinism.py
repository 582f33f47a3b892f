"""Same seed and arguments, same bytes; another seed, another corpus."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest


def _digests(out: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("compress", [None, "gz", "zst"])
def test_same_seed_same_bytes(corpus_factory: Callable[..., Path], compress: str | None) -> None:
    kwargs = {"sessions": 120, "seed": 5, "shards": 2, "compress": compress}
    first = _digests(corpus_factory("det_a", **kwargs))
    second = _digests(corpus_factory("det_b", **kwargs))
    assert first == second
    assert any(name.startswith("recordings-") for name in first)
    assert "_truth.json" in first and "_truth.records.jsonl" in first


def test_different_seed_differs(corpus_factory: Callable[..., Path]) -> None:
    a = _digests(corpus_factory("seed_a", sessions=60, seed=1))
    b = _digests(corpus_factory("seed_b", sessions=60, seed=2))
    assert a["recordings-0000.jsonl"] != b["recordings-0000.jsonl"]
    assert a["_truth.records.jsonl"] != b["_truth.records.jsonl"]


def test_rerun_into_same_dir_leaves_no_stale_shard(corpus_factory: Callable[..., Path]) -> None:
    from golden_distill.synthetic import generate_corpus

    out = corpus_factory("rerun", sessions=40, seed=3, shards=3, compress="gz")
    generate_corpus(out, sessions=40, seed=3, shards=1, compress="gz", oversized_limit=32768)
    assert sorted(p.name for p in out.glob("recordings-*")) == ["recordings-0000.jsonl.gz"]


def test_worker_count_does_not_change_bytes(corpus_factory: Callable[..., Path]) -> None:
    kwargs = {"sessions": 90, "seed": 6, "shards": 3, "compress": "zst"}
    one = _digests(corpus_factory("jobs_1", jobs=1, **kwargs))
    two = _digests(corpus_factory("jobs_2", jobs=2, **kwargs))
    assert one == two


def test_value_pools_are_deterministic_per_seed() -> None:
    from golden_distill.synthetic.pii import PiiPools

    a, b, c = PiiPools(8, size=64), PiiPools(8, size=64), PiiPools(9, size=64)
    assert a.en_names == b.en_names and a.zh_addresses == b.zh_addresses
    assert a.api_keys == b.api_keys and a.cn_ids == b.cn_ids
    assert a.en_names != c.en_names


def test_compiled_templates_equal_the_reference_fill() -> None:
    import random

    from golden_distill.synthetic.catalogue import TOOLS
    from golden_distill.synthetic.pii import PiiPools
    from golden_distill.synthetic.slots import compile_template, draw_slots, fill

    pools = PiiPools(3, size=32)
    for lang in ("en", "zh"):
        slots = draw_slots(random.Random(4), pools, lang)
        slots["amount"], slots["amount_read"], slots["topic"] = 12.5, 20000.0, "bulk bearings"
        for tool in TOOLS.values():
            for template in (tool.args, tool.response):
                assert compile_template(template)(slots) == fill(template, slots)
