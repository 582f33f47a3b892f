"""The replay check of staged case files gives the same result on two cores (this process and
one helper) as in one (datasets/store/staged_check.py), failures included and in the same order."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from golden_distill.datasets import front_and_back
from golden_distill.datasets.store import staged_check
from golden_distill.datasets.store.staged_check import check_staged


def test_two_processes_check_like_one(tmp_path, casegen, monkeypatch):
    cases = [casegen.build_case(i) for i in range(60)]
    broken = [cases[7], cases[44]]
    for case in broken:  # arguments rewritten, hash left as it was
        case.steps[1].arguments = json.dumps({"orderId": f"PSEUDO-{case.case_id}"})
    table = casegen.cases_table(cases)
    paths = [tmp_path / "cases-0000.parquet", tmp_path / "cases-0001.parquet"]
    pq.write_table(table.slice(0, 30), paths[0], row_group_size=4)
    pq.write_table(table.slice(30), paths[1], row_group_size=4)
    monkeypatch.setattr(staged_check, "UNIT_ROWS", 10)  # several units per file

    pools = []

    class CountingPool(front_and_back.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            pools.append(kwargs["max_workers"])

    monkeypatch.setattr(front_and_back, "ProcessPoolExecutor", CountingPool)

    one, rows_one = check_staged(paths, None, processes=1)
    two, rows_two = check_staged(paths, None, processes=2)
    assert pools == [1]  # two at once: this process and one helper, not two helpers
    assert rows_one == rows_two == 60
    assert one.failed_case_ids == sorted(c.case_id for c in broken)
    assert two.failures == one.failures  # same failures, same order
    assert (two.cases_checked, two.steps_checked) == (one.cases_checked, one.steps_checked)
    assert one.cases_checked == 60 and one.steps_checked == sum(len(c.steps) for c in cases)


def test_a_small_set_stays_in_this_process(tmp_path, casegen, monkeypatch):
    path = tmp_path / "cases-0000.parquet"
    pq.write_table(casegen.cases_table([casegen.build_case(i) for i in range(5)]), path)

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool for 5 cases")

    monkeypatch.setattr(front_and_back, "ProcessPoolExecutor", no_pool)
    result, rows = check_staged([path], None)
    assert rows == 5 and result.ok and result.cases_checked == 5
