"""The pytest plugin (pytest11 entry point), exercised with pytester: tests taking
``golden_case`` run once per case (ids are case ids), ``golden_replay`` fails with diff lines on
a P0/P1 crossing, funnels filter, and without a set the tests skip with the reason."""

from __future__ import annotations

import pyarrow as pa
import pytest

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.publish import publish_version

pytest_plugins = ("pytester",)

TEST_FILE = """
import replay_agents
from golden_distill.datasets.replay.agents import reissue


def test_reissue(golden_case, golden_replay):
    run = golden_replay(reissue, golden_case)
    assert run.check.diffs == []


def test_other_state(golden_case, golden_replay):
    golden_replay(replay_agents.other_state, golden_case)
"""


@pytest.fixture(scope="module")
def small_set(generated_set, tmp_path_factory) -> tuple[str, str, list[str], list[str]]:
    """Eight cases of the generated set, republished with funnels and splits to select by."""
    golden = open_set(*generated_set)
    table = golden.read_table().slice(0, 8)
    funnels = [["recovery"] if i % 2 else ["other"] for i in range(8)]
    table = table.set_column(
        table.schema.get_field_index("funnels"), "funnels", pa.array(funnels, pa.list_(pa.string()))
    )
    splits = pa.array(["regression" if i < 3 else "dev" for i in range(8)])
    table = table.set_column(table.schema.get_field_index("split"), "split", splits)
    store = str(tmp_path_factory.mktemp("plugin") / "store")
    version = publish_version(store, "small", cases=table).version
    ids = table.column("case_id").to_pylist()
    recovery = [i for i, f in zip(ids, funnels, strict=True) if f == ["recovery"]]
    return store, f"small@{version}", sorted(ids), sorted(recovery)


def test_one_test_per_case_and_failures_carry_diff_lines(pytester, small_set) -> None:
    store, ref, ids, _ = small_set
    pytester.makepyfile(test_golden=TEST_FILE)
    result = pytester.runpytest(
        "--golden-store", store, "--golden-set", ref, "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=8, failed=8)
    passed = [f"test_golden.py::test_reissue[[]{i}[]] PASSED" for i in ids]
    result = pytester.runpytest("--golden-store", store, "--golden-set", ref, "-v",
                                "-k", "test_reissue", "-p", "no:cacheprovider")  # fmt: skip
    result.stdout.fnmatch_lines_random([f"*{line}*" for line in passed])
    failed = pytester.runpytest("--golden-store", store, "--golden-set", ref,
                                "-k", "test_other_state", "-p", "no:cacheprovider")  # fmt: skip
    failed.assert_outcomes(failed=8)
    failed.stdout.fnmatch_lines(["*P0 final_state_convergence*FAIL*",
                                 "*high final_state_diff: final state differs*",
                                 "*replayed: SOMETHING_ELSE_ENTIRELY*"])  # fmt: skip


def test_funnel_selects_cases(pytester, small_set) -> None:
    store, ref, _, recovery = small_set
    pytester.makepyfile(test_golden=TEST_FILE)
    options = ["--golden-store", store, "--golden-set", ref, "--golden-funnel", "recovery"]
    result = pytester.runpytest(*options, "-k", "test_reissue", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(recovery))
    result.stdout.fnmatch_lines_random([f"*test_reissue[[]{i}[]] PASSED*" for i in recovery])


def test_split_selects_cases_and_an_unknown_split_is_a_usage_error(pytester, small_set) -> None:
    store, ref, _, _ = small_set
    regression = open_set(store, ref).read_table(split="regression").column("case_id").to_pylist()
    assert len(regression) == 3
    pytester.makepyfile(test_golden=TEST_FILE)
    options = ["--golden-store", store, "--golden-set", ref, "-p", "no:cacheprovider"]
    result = pytester.runpytest(
        *options, "--golden-split", "regression", "-k", "test_reissue", "-v"
    )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines_random([f"*test_reissue[[]{i}[]] PASSED*" for i in regression])
    bad = pytester.runpytest(*options, "--golden-split", "test")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--golden-split 'test': one of dev, regression, holdout*"])


def test_without_a_set_tests_skip_with_the_reason(pytester) -> None:
    pytester.makepyfile(test_golden=TEST_FILE)
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*no golden set: pass --golden-store and --golden-set*"])
