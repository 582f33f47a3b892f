"""The optional NER path, with a real spaCy pipeline built here (nothing is downloaded)."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy

from golden_distill.redaction.analyzer import (
    AnalyzerSetupError,
    TextAnalyzer,
    presidio_default_labels_to_ignore,
)
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor


@pytest.fixture(scope="module")
def ner_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(
        [
            {"label": "PERSON", "pattern": [{"LOWER": "zorblax"}, {"LOWER": "quux"}]},
            {"label": "ORG", "pattern": "Initech"},  # ignored: ORGANIZATION is in Presidio's list
        ]
    )
    path = tmp_path_factory.mktemp("ner") / "model"
    nlp.to_disk(path)
    return str(path)


def test_presidio_default_labels_are_used() -> None:
    assert "ORGANIZATION" in presidio_default_labels_to_ignore()


def test_ner_model_finds_names_no_rule_knows(ner_model: str) -> None:
    analyzer = TextAnalyzer(RedactionConfig(ner_model=ner_model))
    text = "please ask Zorblax Quux at Initech"
    found = {(f.entity_type, text[f.start : f.end]) for f in analyzer.analyze(text, 0.3)}
    assert ("PERSON", "Zorblax Quux") in found
    assert not any(e == "ORGANIZATION" for e, _ in found)
    batch = analyzer.analyze_many([text, "nothing here"], 0.3)
    assert any(f.entity_type == "PERSON" for f in batch[text])


def test_ner_names_are_scrubbed_and_propagated(ner_model: str) -> None:
    redactor = Redactor(
        RedactionConfig(ner_model=ner_model),
        PseudonymKey(b"ner-test-key-Lk3Jh8Gf2Ds7Aq9Wz4Xs1Ed6Rc5Tv0Yb"),
    )
    row = {
        "case_id": "c1",
        "user_input": "please ask Zorblax Quux",
        "outcome": {"answer_text": "Asked Zorblax.", "final_state": "DONE"},
        "steps": [],
    }
    result = redactor.redact(row)
    assert result.published, result.reason
    assert "Zorblax" not in result.row["user_input"] + result.row["outcome"]["answer_text"]


def test_a_missing_model_is_an_error_never_a_download(tmp_path: Path) -> None:
    with pytest.raises(AnalyzerSetupError, match="never downloaded"):
        TextAnalyzer(RedactionConfig(ner_model=str(tmp_path / "no-such-model")))
