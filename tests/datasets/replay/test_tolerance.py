"""Ordinary LLM formatting is no regression: amounts written as text (with or without thousands
separators) and an added key at the recording's own default match in stage 2, and every row
names the tolerances it applied."""

from __future__ import annotations

from collections import Counter

import pytest
import replay_agents as agents

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import ReplayConfig, replay_case, replay_cases
from golden_distill.datasets.replay.config import MatchingSection
from golden_distill.datasets.replay.normalise import Normaliser, as_number


@pytest.fixture(scope="module")
def generated(generated_set):
    golden = open_set(*generated_set)
    return golden, [c.case for c in golden.cases()]


def _run(golden, cases, agent, config=None):
    return replay_cases(cases, agent, config or ReplayConfig(), baseline_version="x",
                        volatile_keys=golden.volatile_keys, keep_calls=True)  # fmt: skip


def test_amounts_as_text_replay_as_recorded(generated) -> None:
    golden, cases = generated
    run = _run(golden, cases, agents.amounts_as_text)
    tolerant = [c for r in run.runs for c in r.calls if c.match == "tolerant"]
    assert len(tolerant) > 100  # the writes with amounts: "1905.77" and "1,905.77" both
    assert {t for c in tolerant for t in c.tolerances} == {"numeric_text"}
    assert [d for r in run.runs for d in r.check.diffs] == []
    assert run.gate.verdict == "pass" and run.figures["final_state_convergence"] == 1.0
    # switched off, they are the write diffs they used to be
    strict = ReplayConfig.model_validate({"matching": {"numeric_text": False}})
    off = _run(golden, cases, agents.amounts_as_text, strict)
    assert Counter(d.diff_type for r in off.runs for d in r.check.diffs)["tool_param_diff"] > 100
    assert off.exit_code == 1


def test_an_added_currency_at_the_recorded_default_replays_as_recorded(generated) -> None:
    golden, cases = generated
    run = _run(golden, cases, agents.added_currency)
    tolerant = [c for r in run.runs for c in r.calls if c.match == "tolerant"]
    assert len(tolerant) > 20
    assert {t for c in tolerant for t in c.tolerances} == {"recorded_default"}
    assert [d for r in run.runs for d in r.check.diffs] == []
    strict = ReplayConfig.model_validate({"matching": {"recorded_defaults": False}})
    assert _run(golden, cases, agents.added_currency, strict).exit_code == 1


def _step(seq: int, name: str, args: str, response: str, write: bool) -> Step:
    return Step(seq=seq, kind="tool", name=name, occurrence=1, arguments=args,
                canonical_args_sha256=canonical_args_sha256(args), response=response,
                is_mutating=write)  # fmt: skip


ORDERS = [
    _step(0, "erp_get_order", '{"orderId":"O-1"}', '{"orderId":"O-1","status":"PENDING"}', False),
    _step(1, "mes_list_alarms", '{"machineId":"M-1","since":"2026-12-05"}', '{"alarms":[]}', False),
    _step(2, "erp_update_order", '{"orderId":"O-1","status":"SHIPPED","qty":1}',
          '{"orderId":"O-1","updated":true}', True),
]  # fmt: skip


def test_a_declared_default_and_a_row_name_their_tolerance() -> None:
    def agent(case, tools):
        tools.call("erp_get_order", {"orderId": "O-1"})
        tools.call("mes_list_alarms", {"machineId": "M-1", "since": "2026-12-05"})
        # qty as text, a declared default added, and the status changed: one row, naming what
        # it forgave
        tools.call("erp_update_order", {"orderId": "O-1", "status": "CANCELLED", "qty": "1",
                                        "channel": "web"})  # fmt: skip
        return agents.AgentResult()

    config = ReplayConfig.model_validate(
        {"matching": {"defaults": {"erp_update_order": {"channel": "web"}}}}
    )
    run = replay_case(agent, Case(case_id="c_tolerance", steps=list(ORDERS)), config)
    (param,) = [d for d in run.check.diffs if d.diff_type == "tool_param_diff"]
    assert param.detail == "erp_update_order: status differ"
    assert param.tolerances == ("declared_default", "numeric_text")
    assert param.position == "recorded call 3, replayed call 3"


@pytest.mark.parametrize(
    ("text", "number"),
    [("1905.77", 1905.77), ("1,905.77", 1905.77), ("-12", -12.0), ("1,000,000", 1e6),
     ("0.5", 0.5), ("007", None), ("1,90", None), ("12a", None), ("", None)],
)  # fmt: skip
def test_numbers_as_text(text: str, number: float | None) -> None:
    assert as_number(text) == number


def test_ids_that_look_like_numbers_stay_ids() -> None:
    normaliser = Normaliser(MatchingSection())
    found = normaliser.compare("t", {"code": "007"}, {"code": 7})
    assert found.differing == ["code"]
    found = normaliser.compare("t", {"amount": 1905.77}, {"amount": "1,905.77"})
    assert found.equal and found.tolerances == {"numeric_text"}
