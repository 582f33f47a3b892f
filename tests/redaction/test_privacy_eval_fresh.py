"""The fresh held-out batch (``tests/data/privacy_eval/fresh.jsonl``): floors, not targets.

The batch was written without reading the detectors (README there) and measures how redaction
generalises; its recall is reported in ``docs/privacy.md`` and is far below the issue's target,
so no recall is asserted here. What is guarded is what held when it was first measured: the
look-alikes beside the planted values stay verbatim at least as often, and no case is refused
(refusing a case would "catch" its values without redacting anything). The batch itself must
stay what it claims: reproducible from its builder, every value used once, present in its own
text, and absent from the other corpus halves and the redaction tests. Never tune against it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from golden_distill.redaction.redactor import Redactor

_ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, _ROOT / "bench" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


privacy_eval = _load("privacy_eval")
fresh_build = _load("privacy_eval_fresh_build")

PRECISION_FLOOR = 0.91  # 0.918 when first measured (docs/privacy.md)
MAX_REFUSAL_RATE = 0.01  # 0.000 when first measured; at most one of 139 cases
PLACES = {
    "user_input",
    "step_arguments",
    "step_response",
    "messages",
    "answer_text",
    "handoff_reason",
    "final_state",
}


@pytest.fixture(scope="module")
def items():
    return privacy_eval.load("fresh")


@pytest.fixture(scope="module")
def tally(items, redactor: Redactor, make_case, make_step):
    return privacy_eval.evaluate(items, redactor, make_case, make_step)


def test_the_batch_is_reproducible_and_every_value_is_planted_once(items) -> None:
    built = fresh_build.items()
    assert [(r["category"], r["text"], r["values"], r["negatives"]) for r in items] == [
        (c, t, v, n) for c, _, _, t, v, n in built
    ]
    assert len(items) >= 120
    assert len({r["id"] for r in items}) == len(items)
    values = [v for r in items for v in r["values"]]
    assert len(values) == len(set(values))
    assert {r["place"] for r in items} == PLACES
    for r in items:  # the evaluator sees every value in its own unredacted text
        hay = privacy_eval.views(r["text"])
        for v in r["values"]:
            assert privacy_eval.leaked(v, r["entity"], hay), (r["id"], r["category"])
        for n in r["negatives"]:
            assert n in r["text"], (r["id"], n)


def test_no_fresh_value_is_in_the_other_halves_or_the_redaction_tests(items) -> None:
    elsewhere = [(_ROOT / "tests/data/privacy_eval" / f).read_text() for f in ("tuning.jsonl",)]
    elsewhere.append((_ROOT / "tests/data/privacy_eval/heldout.jsonl").read_text())
    here = Path(__file__).name
    elsewhere += [p.read_text() for p in (_ROOT / "tests/redaction").glob("*.py") if p.name != here]
    hay = "\n".join(elsewhere).lower()
    reused = [r["id"] for r in items for v in r["values"] if len(v) >= 6 and v.lower() in hay]
    assert not reused


def test_look_alikes_stay_verbatim_at_the_floor(tally) -> None:
    assert tally.precision() >= PRECISION_FLOOR, (round(tally.precision(), 3), tally.rewritten)


def test_no_case_is_refused(tally) -> None:
    assert tally.refusal_rate <= MAX_REFUSAL_RATE, (tally.cases_refused, dict(tally.refused))
