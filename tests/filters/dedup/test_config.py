"""The `dedup:` config section: strict, documented, and the shipped YAML matches the defaults."""

from __future__ import annotations

import pytest

from golden_distill.datasets.config_model import ConfigError, validate_mapping
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.flows.config import load_pipeline_config


def test_shipped_yaml_spells_out_the_defaults():
    assert load_pipeline_config().dedup == DedupConfig()


def test_every_field_is_documented():
    for model in (DedupConfig, DedupConfig.model_fields["weights"].annotation):
        for name, field in model.model_fields.items():
            assert field.description, name


def test_unknown_key_is_an_error_with_a_suggestion():
    with pytest.raises(ConfigError, match="did you mean distance_threshold"):
        validate_mapping(DedupConfig, {"distance_treshold": 0.3})


def test_weights_cannot_all_be_zero():
    with pytest.raises(ConfigError, match="at least one feature weight"):
        validate_mapping(
            DedupConfig, {"weights": {"trajectory": 0, "text": 0, "argument_shapes": 0}}
        )


def test_threshold_is_a_cosine_distance():
    with pytest.raises(ConfigError, match="distance_threshold"):
        validate_mapping(DedupConfig, {"distance_threshold": 1.5})
