"""pytest plugin (entry point ``pytest11``): a golden set as parametrised regression tests.

    pytest --golden-store ./golden-store --golden-set nightly@2026.12.01.1 \
        [--golden-funnel recovery] [--golden-split regression] [--golden-gate configs/gate.yaml] \
        [--golden-public-key signer.pub.pem]

A test that takes the ``golden_case`` fixture runs once per case of the set (test ids are case
ids). ``golden_replay(agent, golden_case)`` replays that case and fails the test with the diff
lines when a P0 or P1 line of the gate (``--golden-gate``, default the shipped ``gate.yaml``) is
crossed; it returns the ``CaseRun`` for further assertions. Without ``--golden-set`` such tests
are skipped with the reason. With ``--golden-public-key`` (or ``GOLDEN_PUBLIC_KEY``) the set
must be signed by that key (the store's ``trusted_keys/`` do not count) and an alias must point
into the signed history; otherwise the run stops with a usage error naming the problem. Imports
stay lazy: loading the plugin costs nothing for projects that do not use it.
"""

from __future__ import annotations

from typing import Any

import pytest

_SET_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("golden", "golden-distill regression sets")
    group.addoption("--golden-store", default=None, help="Golden store (folder or fsspec URL).")
    group.addoption("--golden-set", default=None, help="The version: name@version or name@alias.")
    group.addoption("--golden-funnel", default=None, help="Only the cases of this funnel.")
    group.addoption("--golden-split", default=None, help="Only dev, regression or holdout.")
    group.addoption("--golden-gate", default=None, help="Gate config (default: gate.yaml).")
    group.addoption(
        "--golden-public-key",
        action="append",
        default=None,
        help="Ed25519 public key (PEM file) the set must be signed by; repeatable. "
        "Default: GOLDEN_PUBLIC_KEY.",
    )


def pytest_configure(config: pytest.Config) -> None:
    split = config.getoption("--golden-split")
    if split is not None:
        # loaded only when a golden option is given: pytest imports this plugin in every run
        from golden_distill.datasets.schema import SPLITS

        if split not in SPLITS:
            raise pytest.UsageError(f"--golden-split {split!r}: one of {', '.join(SPLITS)}")


def _golden(config: pytest.Config) -> Any:
    if _SET_KEY not in config.stash:
        # loaded only when a golden option is given: pytest imports this plugin in every run
        from golden_distill.datasets.reader import open_set
        from golden_distill.datasets.store.manifest import ManifestError
        from golden_distill.datasets.store.verify import ChecksumError
        from golden_distill.datasets.store.versions import VersionNotFound

        store = config.getoption("--golden-store")
        ref = config.getoption("--golden-set")
        if not store:
            raise pytest.UsageError("--golden-set needs --golden-store")
        keys = config.getoption("--golden-public-key")
        try:
            config.stash[_SET_KEY] = open_set(store, ref, public_key=keys)
        except (ManifestError, ChecksumError, VersionNotFound) as exc:
            raise pytest.UsageError(f"golden set refused: {exc}") from None
    return config.stash[_SET_KEY]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "golden_case" not in metafunc.fixturenames:
        return
    config = metafunc.config
    if not config.getoption("--golden-set"):
        metafunc.parametrize("golden_case", [None], ids=["no-golden-set"], indirect=True)
        return
    golden = _golden(config)
    funnel = config.getoption("--golden-funnel")
    split = config.getoption("--golden-split")
    ids = [case.case_id for case in golden.cases(funnel=funnel, split=split)]
    metafunc.parametrize("golden_case", ids, ids=ids, indirect=True)


@pytest.fixture
def golden_case(request: pytest.FixtureRequest) -> Any:
    """The case (reader ``ReplayCase``) this test instance replays."""
    if request.param is None:
        pytest.skip("no golden set: pass --golden-store and --golden-set")
    return _golden(request.config).get(request.param)


@pytest.fixture
def golden_replay(request: pytest.FixtureRequest) -> Any:
    """``golden_replay(agent, golden_case)``: replay one case, fail on a P0/P1 crossing."""
    # loaded only when a golden option is given: pytest imports this plugin in every run
    from golden_distill.datasets.replay.config import SHIPPED_GATE, load_replay_config
    from golden_distill.datasets.replay.gate import evaluate
    from golden_distill.datasets.replay.runner import replay_case

    config = request.config
    gate_path = config.getoption("--golden-gate") or SHIPPED_GATE
    replay_config = load_replay_config(gate_path)

    def run(agent: Any, case: Any) -> Any:
        golden = _golden(config)
        case_run = replay_case(agent, case, replay_config, golden.volatile_keys)
        gate, _ = evaluate([case_run.check], replay_config.gate)
        failing = [x for x in gate.lines if x.crossed and x.fails and x.level in ("P0", "P1")]
        if failing:
            lines = [x.describe() for x in failing]
            lines += [
                f"{d.severity} {d.diff_type}: {d.detail}"
                + (f"\n    recorded: {d.recorded}" if d.recorded is not None else "")
                + (f"\n    replayed: {d.replayed}" if d.replayed is not None else "")
                for d in case_run.check.diffs
            ]
            pytest.fail(f"golden case {case_run.case.case_id}:\n" + "\n".join(lines), False)
        return case_run

    return run
