"""pytest plugin (entry point ``pytest11``): a golden set as parametrised regression tests.

    pytest --golden-store ./golden-store --golden-set nightly@2026.12.01.1 \
        [--golden-funnel recovery] [--golden-split regression] [--golden-gate configs/gate.yaml] \
        [--golden-public-key signer.pub.pem]

A test that takes the ``golden_case`` fixture runs once per case of the set (test ids are case
ids). ``golden_replay(agent, golden_case)`` replays that case and returns the ``CaseRun``.

One verdict, the CLI's: the gate (``--golden-gate``, default the shipped ``gate.yaml``) is
evaluated over the run, not per case. For each test function that replays, one more item,
``<test>[golden-gate]``, runs after its cases and fails exactly when ``golden replay`` would
exit 1 over the same cases (the gate's lines, then the rows of every case with differences);
P2 lines crossed are pytest warnings (``GoldenGateWarning``). A case test fails on its own only
when that case alone crosses a red line whatever the other cases do (a write diff while
``writes_identical``, a stub escape beyond ``max_stub_escapes``, a final state that differs
while convergence must be 1.0), so the case that broke the gate is the failing test too. An
agent that breaks the contract (``AgentUsageError``) stops the run as a usage error.

Without ``--golden-set`` such tests are skipped with the reason. An unknown funnel or split is a
usage error with a suggestion, never a run that skips everything. With ``--golden-public-key``
(or ``GOLDEN_PUBLIC_KEY``) the set must be signed by that key (the store's ``trusted_keys/`` do
not count) and an alias must point into the signed history; otherwise the run stops with a usage
error naming the problem. Imports stay lazy: loading the plugin costs nothing for projects that
do not use it.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

_SET_KEY = pytest.StashKey[Any]()
_CHECKS_KEY = pytest.StashKey[dict[str, list[Any]]]()
GATE_ID = "golden-gate"


class GoldenGateWarning(UserWarning):
    """A P2 line of the gate is crossed (it warns, it does not fail)."""


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
    config.stash[_CHECKS_KEY] = {}
    split = config.getoption("--golden-split")
    funnel = config.getoption("--golden-funnel")
    if split is None and funnel is None:
        return
    # loaded only when a golden option is given: pytest imports this plugin in every run
    from golden_distill.datasets.replay.selection import SelectionError, check_selection

    golden = _golden(config) if funnel and config.getoption("--golden-set") else None
    try:
        check_selection(golden, funnel if golden is not None else None, split)
    except SelectionError as exc:
        raise pytest.UsageError(f"--golden-{exc}") from None


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


def _replay_config(config: pytest.Config) -> Any:
    # loaded only when a golden option is given: pytest imports this plugin in every run
    from golden_distill.datasets.replay.config import SHIPPED_GATE, load_replay_config

    return load_replay_config(config.getoption("--golden-gate") or SHIPPED_GATE)


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


class GoldenGateItem(pytest.Item):
    """The gate over one test function's replayed cases (the CLI's verdict)."""

    def __init__(self, *, function: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.function = function

    def runtest(self) -> None:
        from golden_distill.datasets.replay.gate import evaluate

        checks = self.config.stash[_CHECKS_KEY].get(self.function, [])
        if not checks:
            pytest.skip("no golden case of this test was replayed")
        gate, _ = evaluate(checks, _replay_config(self.config).gate)
        for line in gate.lines:
            if line.crossed and not line.fails:
                warnings.warn(GoldenGateWarning(f"golden gate: {line.describe()}"), stacklevel=1)
        if gate.verdict == "fail":
            lines = [f"golden gate FAIL over {len(checks)} case(s) of {self.function}:"]
            lines += [f"  {x.describe()}" for x in gate.lines if x.crossed]
            for check in checks:
                lines += _rows(check)
            pytest.fail("\n".join(lines), False)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.function}[{GATE_ID}]"


def _rows(check: Any) -> list[str]:
    out = []
    for d in check.diffs:
        where = f" ({d.position})" if d.position else ""
        line = f"{check.case_id}: {d.severity} {d.diff_type}{where}: {d.detail}"
        if d.recorded is not None:
            line += f"\n    recorded: {d.recorded}"
        if d.replayed is not None:
            line += f"\n    replayed: {d.replayed}"
        out.append(line)
    return out


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """One gate item after the last case of every test function that replays golden cases."""
    if not config.getoption("--golden-set"):
        return
    last: dict[str, int] = {}
    for i, item in enumerate(items):
        if "golden_replay" in getattr(item, "fixturenames", ()) and "golden_case" in getattr(
            item, "fixturenames", ()
        ):
            last[_function_of(item)] = i
    for function, index in sorted(last.items(), key=lambda kv: -kv[1]):
        parent = items[index].parent
        assert parent is not None
        gate = GoldenGateItem.from_parent(parent, name=f"{function.rsplit('::', 1)[-1]}"
                                          f"[{GATE_ID}]", function=function)  # fmt: skip
        items.insert(index + 1, gate)


def _function_of(item: pytest.Item) -> str:
    name = getattr(item, "originalname", item.name)
    parent = item.parent.nodeid if item.parent is not None else ""
    return f"{parent}::{name}"


@pytest.fixture
def golden_case(request: pytest.FixtureRequest) -> Any:
    """The case (reader ``ReplayCase``) this test instance replays."""
    if request.param is None:
        pytest.skip("no golden set: pass --golden-store and --golden-set")
    return _golden(request.config).get(request.param)


@pytest.fixture
def golden_replay(request: pytest.FixtureRequest) -> Any:
    """``golden_replay(agent, golden_case)``: replay one case; the verdict is the run's."""
    # loaded only when a golden option is given: pytest imports this plugin in every run
    from golden_distill.datasets.replay.agent_call import AgentUsageError
    from golden_distill.datasets.replay.runner import replay_case

    config = request.config
    replay_config = _replay_config(config)
    function = _function_of(request.node)

    def run(agent: Any, case: Any) -> Any:
        golden = _golden(config)
        try:
            case_run = replay_case(agent, case, replay_config, golden.volatile_keys)
        except AgentUsageError as exc:
            detail = f"\n{exc.traceback_text}" if exc.traceback_text else ""
            pytest.exit(f"golden replay: usage error: {exc}{detail}", pytest.ExitCode.USAGE_ERROR)
        config.stash[_CHECKS_KEY].setdefault(function, []).append(case_run.check)
        certain = _certain_failures(case_run.check, replay_config.gate)
        if certain:
            lines = [f"{name} (fails the gate whatever the other cases do)" for name in certain]
            lines += _rows(case_run.check)
            pytest.fail(f"golden case {case_run.case.case_id}:\n" + "\n".join(lines), False)
        return case_run

    return run


def _certain_failures(check: Any, gate: Any) -> list[str]:
    """The red lines this case crosses on its own, whatever the rest of the run does."""
    from golden_distill.datasets.replay.diffs import WRITE_SENSITIVE

    out = []
    if gate.p0.writes_identical and any(
        d.is_write and d.diff_type in WRITE_SENSITIVE for d in check.diffs
    ):
        out.append("P0 write_diffs")
    if check.stub_escapes > gate.p0.max_stub_escapes:
        out.append("P0 stub_escapes")
    converges = not check.final_state_checked or check.final_state_ok
    if gate.p0.min_final_state_convergence >= 1.0 and not converges:
        out.append("P0 final_state_convergence")
    if gate.p1.fail and gate.p1.min_parameter_parity >= 1.0 and check.aligned_equal < check.aligned:
        out.append("P1 parameter_parity")
    return out
