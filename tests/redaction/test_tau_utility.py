"""Utility on the vendored tau-bench runs: catalogue values survive redaction unchanged.

Labels from the tau-bench database structure (``tests/support/tau_utility.py``). Targets from
the issue: no product name, country, option value, airport, time or tool name rewritten in the
sample, at most 20 over-redactions per 100 published cases, and no impossible time or date.
"""

from __future__ import annotations

import pytest
import tau_utility

from golden_distill.redaction.redactor import Redactor

PER_ENV = 15


@pytest.fixture(scope="module")
def utility(redactor: Redactor, tmp_path_factory: pytest.TempPathFactory) -> tau_utility.Utility:
    return tau_utility.measure(redactor, PER_ENV, tmp_path_factory.mktemp("tau-utility"))


def test_the_sample_is_labelled_from_the_database(utility: tau_utility.Utility) -> None:
    assert utility.cases == 2 * PER_ENV
    assert utility.labelled >= 10 * PER_ENV  # products, options, airports, times, tool names


def test_most_cases_are_published(utility: tau_utility.Utility) -> None:
    assert utility.published >= 0.9 * utility.cases


def test_catalogue_values_are_not_rewritten(utility: tau_utility.Utility) -> None:
    names = sorted({v for _, v in utility.rewritten})
    assert utility.per_100 <= 20, (round(utility.per_100, 1), names[:60])


def test_times_and_dates_stay_valid(utility: tau_utility.Utility) -> None:
    assert utility.invalid_times == 0
