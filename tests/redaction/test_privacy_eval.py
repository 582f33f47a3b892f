"""The labelled privacy evaluation (tuning half only; the held-out half is never read here).

The issue's target is recall >= 0.97 on planted values (``bench/redaction.py`` reports both
halves); this test guards it on the tuning half, with negatives (catalogue look-alikes) left
verbatim and most cases published (refusing everything is not a pass). Runs the real batch
redaction (``Redactor.redact_many``) on one canonical case per labelled item.
"""

from __future__ import annotations

import pytest
from privacy_probes import privacy_eval

from golden_distill.redaction.redactor import Redactor

RECALL_TARGET = 0.97  # the target, printed by bench/redaction.py
RECALL_FLOOR = RECALL_TARGET
PRECISION_TARGET = 1.0  # a catalogue look-alike is never personal
MAX_REFUSAL_RATE = 0.10


@pytest.fixture(scope="module")
def tally(redactor: Redactor, make_case, make_step):
    return privacy_eval.evaluate(privacy_eval.load("tuning"), redactor, make_case, make_step)


def test_the_corpus_is_labelled_and_split_once() -> None:
    tuning, heldout = privacy_eval.load("tuning"), privacy_eval.load("heldout")
    assert len(tuning) + len(heldout) >= 400
    assert not {r["id"] for r in tuning} & {r["id"] for r in heldout}
    # stratified: every category with two or more items has items in both halves
    assert {r["category"] for r in tuning} & {r["category"] for r in heldout}
    assert all(r["values"] or r["negatives"] for r in tuning)


def test_the_evaluator_counts_a_disguised_value_left_in_place_as_a_leak() -> None:
    hay = privacy_eval.views("reply to mei.lindqvist%2540example.net or =40 soon")
    assert privacy_eval.leaked("mei.lindqvist@example.net", "EMAIL_ADDRESS", hay)
    assert not privacy_eval.leaked("mei.lindqvist@example.net", "EMAIL_ADDRESS", ["<EMAIL_1>"])
    assert privacy_eval.leaked("4155550177", "PHONE_NUMBER", privacy_eval.views("cell 4l5555Ol77"))


def test_recall_on_the_tuning_half(tally) -> None:
    per_entity = {e: round(tally.recall(e), 3) for e in sorted(tally.planted)}
    leaks = [f"{i} {c}" for i, c, _ in tally.leaks]
    assert tally.recall() >= RECALL_FLOOR, (round(tally.recall(), 3), per_entity, leaks[:40])


def test_negatives_stay_verbatim(tally) -> None:
    assert tally.precision() >= PRECISION_TARGET, (round(tally.precision(), 3), tally.rewritten)


def test_most_cases_are_published(tally) -> None:
    assert tally.refusal_rate <= MAX_REFUSAL_RATE, tally.refusal_rate
