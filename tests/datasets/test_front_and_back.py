"""Work shared by this process and one helper (datasets/front_and_back.py): every item once, in
input order, as one process gives it; both processes really work; a helper's error surfaces."""

from __future__ import annotations

import os

import pytest
from spawned_work import power_and_pid

from golden_distill.datasets import front_and_back
from golden_distill.datasets.front_and_back import front_and_back as shared


@pytest.mark.parametrize("count", [0, 1, 2, 3, 9])
def test_every_item_once_in_input_order(count):
    items = list(range(count))
    out = list(shared(items, power_and_pid, 3))
    assert [index for index, _ in out] == items
    assert [value for _, (value, _) in out] == [i**3 for i in items]


def test_the_helper_takes_items_from_the_back(monkeypatch):
    monkeypatch.setattr(front_and_back, "HELPER_QUEUE", 1)
    out = list(shared(list(range(12)), power_and_pid, 2))
    pids = [pid for _, (_, pid) in out]
    here = [i for i, pid in enumerate(pids) if pid == os.getpid()]
    there = [i for i, pid in enumerate(pids) if pid != os.getpid()]
    assert here and there  # both processes worked
    assert here == list(range(len(here)))  # this one from the front ...
    assert there == list(range(len(here), 12))  # ... the helper from the back, up to where they met
    assert len({pids[i] for i in there}) == 1  # one helper, not a pool


def test_an_error_in_the_helper_is_raised_here():
    with pytest.raises(ValueError, match="negative item -5"):
        list(shared([1, 2, 3, -5], power_and_pid, 2))  # the last item goes to the helper first
