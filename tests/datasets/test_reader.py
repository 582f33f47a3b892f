"""The replay reader: opening versions, filtering by funnel, looking recorded responses up both
ways with ingest's canonicalisation, and detecting changed call order."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import orjson
import pytest

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.case import Step
from golden_distill.datasets.reader import ReplayMiss, VersionNotFound, open_set
from golden_distill.datasets.store.order import observed_order, order_checksum
from golden_distill.datasets.store.publish import ReplayCheckFailed, publish_version


def _load_factory():
    path = Path(__file__).parent / "store" / "factory.py"
    spec = importlib.util.spec_from_file_location("golden_reader_test_factory", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


factory = _load_factory()
SET = "replay"


@pytest.fixture
def store(tmp_path) -> str:
    return str(tmp_path / "store")


def test_open_by_version_alias_and_bare_name(store):
    first = publish_version(store, SET, cases=factory.make_table(10)).version
    second = publish_version(store, SET, cases=factory.make_table(12)).version
    assert open_set(store, f"{SET}@{first}").version == first
    assert open_set(store, f"{SET}@latest").version == second
    assert open_set(store, SET).version == second
    golden = open_set(store, SET)
    assert len(golden) == 12 and golden.manifest["version"] == second
    with pytest.raises(VersionNotFound):
        open_set(store, f"{SET}@2001.01.01.1")
    with pytest.raises(VersionNotFound):
        open_set(store, f"{SET}@stable")


def test_cases_filtered_by_funnel(store):
    table = factory.make_table(40)
    version = publish_version(store, SET, cases=table).version
    golden = open_set(store, f"{SET}@{version}")
    for funnel, count in golden.manifest["counts"]["per_funnel"].items():
        cases = list(golden.cases(funnel=funnel))
        assert len(cases) == count
        assert all(funnel in c.case.funnels for c in cases)
        assert golden.read_table(funnel=funnel).num_rows == count
    assert list(golden.cases(funnel="no-such-funnel")) == []
    ids = [c.case_id for c in golden.cases()]
    assert ids == sorted(table.column("case_id").to_pylist())


def test_lookup_by_occurrence_and_by_arguments_returns_the_recording(store):
    case = factory.build_case(6, steps=6)  # the first tool repeats: occurrences 1 and 2
    publish_version(store, SET, cases=factory.cases_table([case]))
    replay = open_set(store, SET).get(case.case_id)
    for step in case.steps:
        got = replay.lookup(step.name, step.occurrence)
        assert (got.response, got.status, got.error) == (step.response, step.status, step.error)
        assert got.seq == step.seq
    repeated = next(s for s in case.steps if s.occurrence == 2)
    # same arguments with keys reordered and a fresh request id: found all the same
    args = json.loads(repeated.arguments)
    reordered = dict(reversed(list({**args, "requestId": "another-request"}.items())))
    found = replay.lookup_args(repeated.name, reordered)
    key = canonical_args_sha256(args)
    first_with_args = next(
        s for s in case.steps if s.name == repeated.name and s.canonical_args_sha256 == key
    )
    assert (found.seq, found.response) == (first_with_args.seq, first_with_args.response)
    assert replay.lookup_args(repeated.name, repeated.arguments).name == repeated.name
    with pytest.raises(ReplayMiss, match=repeated.name):
        replay.lookup_args(repeated.name, {**args, "orderId": "ORD-other"})
    with pytest.raises(ReplayMiss):
        replay.lookup(repeated.name, 99)


def test_duplicate_calls_with_the_same_arguments_are_told_apart_by_nth(store):
    case = factory.build_case(1, steps=2)
    same = '{"orderId": "ORD-1"}'
    case.steps = [
        Step(
            seq=i,
            kind="tool",
            name="erp_get_order",
            occurrence=i + 1,
            arguments=same,
            canonical_args_sha256=canonical_args_sha256(same),
            response=f'{{"poll": {i}}}',
        )
        for i in range(3)
    ]
    publish_version(store, SET, cases=factory.cases_table([case]))
    replay = open_set(store, SET).get(case.case_id)
    responses = [
        replay.lookup_args("erp_get_order", {"orderId": "ORD-1"}, n).response for n in (1, 2, 3)
    ]
    assert responses == ['{"poll": 0}', '{"poll": 1}', '{"poll": 2}']
    with pytest.raises(ReplayMiss):
        replay.lookup_args("erp_get_order", {"orderId": "ORD-1"}, 4)


def test_order_checksum_detects_inserted_removed_and_reordered_calls(store):
    case = factory.build_case(3, steps=5)
    publish_version(store, SET, cases=factory.cases_table([case]))
    replay = open_set(store, SET).get(case.case_id)
    observed = [(s.name, orjson.loads(s.arguments)) for s in case.steps]
    assert order_checksum(observed_order(observed)) == replay.order_checksum
    assert replay.compare_order(observed).identical

    inserted = [*observed[:2], ("kb_search", {"q": "x"}), *observed[2:]]
    removed = observed[:1] + observed[2:]
    swapped = [observed[1], observed[0], *observed[2:]]
    for calls in (inserted, removed, swapped):
        assert order_checksum(observed_order(calls)) != replay.order_checksum
    assert replay.compare_order(inserted).inserted == [2]
    assert replay.compare_order(removed).removed == [1]
    diff = replay.compare_order(swapped)
    assert diff.reordered and not diff.inserted and not diff.removed


def test_lookups_use_the_volatile_keys_recorded_in_the_manifest(store):
    volatile = ["sessionToken"]
    case = factory.build_case(2, steps=3)
    for step in case.steps:
        args = {**json.loads(step.arguments), "sessionToken": f"tok-{step.seq}"}
        step.arguments = json.dumps(args)
        step.canonical_args_sha256 = canonical_args_sha256(args, volatile)
    table = factory.cases_table([case])
    with pytest.raises(ReplayCheckFailed):  # hashed with other keys than the default ones
        publish_version(store, SET, cases=table)
    config = {"ingest": {"volatile_keys": volatile}}
    publish_version(store, SET, cases=table, manifest_fields={"config": config})
    replay = open_set(store, SET).get(case.case_id)
    step = case.steps[1]
    args = {**json.loads(step.arguments), "sessionToken": "a-new-session"}
    assert replay.lookup_args(step.name, args).seq == step.seq


def test_fetch_one_case_without_verifying_reads_the_same_case(store):
    table = factory.make_table(50)
    publish_version(store, SET, cases=table)
    wanted = table.column("case_id")[17].as_py()
    fast = open_set(store, SET, verify=False).get(wanted)
    checked = open_set(store, SET).get(wanted)
    assert fast.case == checked.case
    assert fast.case.to_row(pipeline_fields=True) == table.slice(17, 1).to_pylist()[0]
