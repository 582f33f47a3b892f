"""Erasure's needles are what redaction made of a subject, derived with redaction's own rules."""

from __future__ import annotations

import pytest

from golden_distill.datasets.store.erasure import ErasureError, Subject
from golden_distill.flows.config import load_pipeline_config
from golden_distill.redaction.erasure_needles import needles_of, subject_needles
from golden_distill.redaction.key_rules import RuleMatcher
from golden_distill.redaction.pseudonym import key_pseudonym, value_token

SECRET = b"erasure-needles-test-key-0123456789abcdef"


@pytest.fixture(scope="module")
def matcher() -> RuleMatcher:
    return RuleMatcher(load_pipeline_config(None).redaction)


def test_a_key_field_gives_its_pseudonym_and_the_widened_forms(matcher):
    rule = matcher.match(("user_id",))
    needles = subject_needles(Subject.parse("user_id=mia_li_3650"), SECRET, matcher)
    assert key_pseudonym("mia_li_3650", rule.key_type, SECRET, rule.prefix) in needles
    assert len(needles) == 3  # the base form and two widenings, all distinct


def test_a_personal_field_and_an_entity_type_give_their_placeholder(matcher):
    token = value_token("mia@example.com", "EMAIL_ADDRESS", SECRET)
    assert subject_needles(Subject.parse("email=mia@example.com"), SECRET, matcher) == {token}
    person = subject_needles(Subject.parse("PERSON=Mia Li"), SECRET, matcher)
    assert person == {value_token("Mia Li", "PERSON", SECRET)}
    both = needles_of([Subject.parse("email=mia@example.com"), Subject.parse("PERSON=Mia Li")],
                      SECRET, matcher)  # fmt: skip
    assert both == {token, *person}


def test_an_unknown_field_is_refused_without_quoting_the_value(matcher):
    with pytest.raises(ErasureError, match="favourite_colour") as info:
        subject_needles(Subject.parse("favourite_colour=blue"), SECRET, matcher)
    assert "blue" not in str(info.value)
