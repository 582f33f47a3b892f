"""Amount paths: vectorised extraction agrees with a plain walk, at depth, in lists, odd shapes."""

from __future__ import annotations

import json
import random

import polars as pl
import pytest

from golden_distill.filters.json_paths import max_number, max_number_python, parse_path

PATHS = [parse_path(p) for p in ["amount", "total", "payment.amount", "items[*].amount"]]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"amount": 12000}, 12000.0),
        ({"payment": {"amount": "48200.00"}}, 48200.0),
        ({"items": [{"amount": 5}, {"amount": 20000.5}, {"sku": "x"}]}, 20000.5),
        ({"total": 3, "amount": 7}, 7.0),
        ({"price": 99999}, None),
        ({"amount": True}, None),
        ({"amount": "n/a"}, None),
        ({"nested": {"amount": 50000}}, None),  # only the paths given, not any "amount" key
    ],
)
def test_values_at_paths(doc, expected):
    text = json.dumps(doc)
    assert max_number_python(text, PATHS) == expected
    assert max_number(pl.Series([text]), PATHS).to_list() == [expected]


def test_odd_shapes_fall_back_without_failing_the_batch():
    texts = [
        json.dumps({"items": "many"}),  # a string where a list was expected
        "[1, 2]",
        "not json",
        None,
        json.dumps({"items": [{"amount": 15000}, 3]}),
        json.dumps({"amount": {"value": 1}}),
        json.dumps({"amount": 10000}),
    ]
    got = max_number(pl.Series(texts), PATHS).to_list()
    assert got == [None, None, None, None, 15000.0, None, 10000.0]


def test_indexes_and_deep_wildcards():
    paths = [parse_path("orders[*].lines[*].total"), parse_path("orders[0].fee")]
    doc = {"orders": [{"lines": [{"total": 1}, {"total": 9}], "fee": 4}, {"lines": [{"total": 7}]}]}
    assert max_number(pl.Series([json.dumps(doc)]), paths).to_list() == [9.0]
    assert max_number_python(json.dumps({"orders": [{"fee": 40}]}), paths) == 40.0


def test_vectorised_agrees_with_the_walk_on_random_documents():
    rng = random.Random(3)

    def value():
        return rng.choice([rng.uniform(0, 30000), str(rng.randint(0, 30000)), None, "x", [1]])

    docs = []
    for _ in range(300):
        doc = {}
        if rng.random() < 0.5:
            doc["amount"] = value()
        if rng.random() < 0.4:
            doc["payment"] = {"amount": value()}
        if rng.random() < 0.4:
            doc["items"] = [{"amount": value()} for _ in range(rng.randint(0, 4))]
        docs.append(json.dumps(doc))
    got = max_number(pl.Series(docs), PATHS).to_list()
    assert got == [max_number_python(d, PATHS) for d in docs]


@pytest.mark.parametrize("bad", ["", "a..b", ".a", "items[x].amount", "a[*"])
def test_bad_paths_are_rejected(bad):
    with pytest.raises(ValueError, match="bad JSON path"):
        parse_path(bad)
