"""redaction/key_digests.py: digest sets are sorted and distinct, as ``np.unique`` gives them."""

from __future__ import annotations

import numpy as np
import pytest

from golden_distill.redaction.key_digests import KeyDigests, RunKeys, digest_array, sorted_distinct


@pytest.mark.parametrize("size", [0, 1, 2, 7, 1000])
def test_sorted_distinct_is_numpys_unique(size: int) -> None:
    rng = np.random.default_rng(size)
    values = rng.integers(0, max(2, size // 3), size=size, dtype=np.uint64)  # with repeats
    values = np.concatenate([values, np.array([2**64 - 1, 0][: min(size, 2)], dtype=np.uint64)])
    got = sorted_distinct(values)
    assert got.dtype == np.uint64
    assert np.array_equal(got, np.unique(values))


def test_digest_array_and_merge_give_sorted_distinct_digests() -> None:
    assert digest_array([5, 3, 5, 2**64 - 1, 0]).tolist() == [0, 3, 5, 2**64 - 1]
    a = KeyDigests(originals=digest_array([9, 1]), bases=digest_array([4]))
    b = KeyDigests(originals=digest_array([1, 7]), bases=digest_array([4, 2]))
    merged = RunKeys.merge([a, b])
    assert merged.originals.tolist() == [1, 7, 9]
    assert merged.bases.tolist() == [2, 4]
    assert RunKeys.merge([]).originals.tolist() == []
