"""One registry of recognizers (``recognizers/registry.py``): everything else derives from it,
and configs only switch recognizers on or off by a registered name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from golden_distill.datasets.config_model import ConfigError
from golden_distill.flows.config import load_pipeline_config
from golden_distill.redaction.config import KNOWN_RECOGNIZERS, RedactionConfig
from golden_distill.redaction.recognizers import SPECS
from golden_distill.redaction.recognizers.registry import REGISTERED, closest

ROOT = Path(__file__).parents[2]


def test_specs_config_and_registry_name_the_same_recognizers_in_order() -> None:
    assert list(SPECS) == list(REGISTERED) == list(KNOWN_RECOGNIZERS)
    assert RedactionConfig().active_recognizers == list(REGISTERED)
    assert all(SPECS[name].name == name for name in REGISTERED)


def test_every_recognizer_file_with_a_spec_is_registered() -> None:
    """A new file declaring a ``SPEC`` that nobody registered would be silently off."""
    folder = ROOT / "redaction" / "recognizers"
    declaring = {
        p.stem for p in folder.glob("*.py") if "\nSPEC = RecognizerSpec(" in p.read_text("utf-8")
    }
    verifier_only = {"presidio_predefined"}  # the verifier's extra floor, not configurable
    assert declaring - verifier_only == set(REGISTERED)


def test_shipped_configs_list_no_recognizers() -> None:
    """The shipped configs only disable by name; the list itself lives in the registry."""
    for path in (ROOT / "configs").glob("*.yaml"):
        section = (yaml.safe_load(path.read_text("utf-8")) or {}).get("redaction") or {}
        assert "recognizers" not in section, path.name
    assert load_pipeline_config(ROOT / "configs" / "nightly.yaml").redaction.active_recognizers == (
        list(REGISTERED)
    )


def test_disabling_by_name_and_the_floor() -> None:
    cfg = RedactionConfig(disabled_recognizers=["bare_name", "places_in_text"])
    assert "bare_name" not in cfg.active_recognizers
    assert cfg.active_recognizers == [n for n in REGISTERED if n not in cfg.disabled_recognizers]
    with pytest.raises(ValueError, match="drops email"):
        RedactionConfig(disabled_recognizers=["email"])


def test_a_misspelt_name_is_an_error_naming_the_closest(tmp_path: Path) -> None:
    assert closest("phon") == "phone"
    assert closest("national_id") == "national_ids"
    path = tmp_path / "c.yaml"
    path.write_text("redaction:\n  disabled_recognizers: [bare_nmae]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="'bare_nmae'; did you mean 'bare_name'"):
        load_pipeline_config(path)


def test_retired_names_still_load() -> None:
    cfg = RedactionConfig(recognizers=["email", "phone", "credit_card", "iban", "api_key"])
    assert cfg.recognizers == ["email", "phone", "credit_card", "iban", "secrets"]
