"""Config validation messages name the file, the key path and a suggestion."""

from __future__ import annotations

import pytest

from golden_distill.datasets.config_model import ConfigError, load_yaml
from golden_distill.flows.config import PipelineConfig, load_pipeline_config


def test_shipped_config_validates():
    assert isinstance(load_pipeline_config(), PipelineConfig)


def test_typo_gets_a_suggestion(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("ingest:\n  max_line_bites: 10\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(PipelineConfig, path)
    assert f"{path}: ingest.max_line_bites: unknown key; did you mean max_line_bytes?" in str(
        err.value
    )


def test_out_of_range_value_names_the_path(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("ingest:\n  batch_rows: 0\n")
    with pytest.raises(ConfigError, match=r"ingest\.batch_rows: Input should be greater than 0"):
        load_yaml(PipelineConfig, path)


def test_invalid_yaml_names_the_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("ingest:\n  batch_rows: [1,\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_yaml(PipelineConfig, path)
