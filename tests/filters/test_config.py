"""The funnels section: shipped default = code defaults, typos and bad values named precisely."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.datasets.config_model import ConfigError, load_yaml
from golden_distill.filters.config import FunnelsConfig
from golden_distill.flows.cli import app
from golden_distill.flows.config import DEFAULT_CONFIG_PATH, PipelineConfig, load_pipeline_config


def _write(tmp_path, text: str):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_shipped_section_matches_the_defaults_and_documents_every_field():
    assert load_pipeline_config().funnels == FunnelsConfig()
    text = DEFAULT_CONFIG_PATH.read_text()
    section = yaml.safe_load(text)["funnels"]
    for name, sub in FunnelsConfig.model_fields.items():
        declared = sub.annotation.model_fields  # type: ignore[union-attr]
        assert set(section[name]) == set(declared), name  # every field spelled out...
        for field in declared.values():
            assert field.description, f"{name}: field without description"


def test_typo_names_file_path_and_suggestion(tmp_path):
    path = _write(tmp_path, "funnels:\n  recovery:\n    recover_whitin_steps: 3\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(PipelineConfig, path)
    assert str(err.value) == (
        f"{path}: funnels.recovery.recover_whitin_steps: unknown key; "
        "did you mean recover_within_steps?"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("funnels:\n  recovery:\n    recover_within_steps: 0\n",
         "funnels.recovery.recover_within_steps: Input should be greater than or equal to 1"),
        ("funnels:\n  human_handoff:\n    min_intent_confidence: 1.5\n",
         "funnels.human_handoff.min_intent_confidence: Input should be less than or equal to 1"),
        ("funnels:\n  quotas:\n    per_tenant_max: 2.5\n",
         "funnels.quotas.per_tenant_max: Value error, must be a whole number >= 1"),
        ("funnels:\n  high_value_mutating:\n    amount_paths: ['items[x].amount']\n",
         "funnels.high_value_mutating.amount_paths: Value error, bad JSON path 'items[x].amount'"),
        ("funnels:\n  recovery:\n    failure_statuses: [timout]\n",
         "funnels.recovery.failure_statuses: Value error, unknown step status(es) ['timout']"),
        ("funnels:\n  quotas:\n    per_funnel_max: {recovry: 3}\n",
         "names unknown funnel(s) ['recovry']"),
    ],
)  # fmt: skip
def test_bad_values_name_the_key(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_yaml(PipelineConfig, path)
    assert message in str(err.value)
    assert str(err.value).startswith(f"{path}: funnels")


def test_cli_validate_and_schema(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(app, ["config", "validate", str(DEFAULT_CONFIG_PATH)])
    assert ok.exit_code == 0 and "valid" in ok.output
    bad = _write(tmp_path, "funnels:\n  recovery:\n    recover_whitin_steps: 3\n")
    result = runner.invoke(app, ["config", "validate", str(bad)])
    assert result.exit_code == 2
    expected = "recovery.recover_whitin_steps: unknown key; did you mean recover_within_steps?"
    assert f"{bad}: funnels.{expected}" in result.output
    assert "Traceback" not in result.output
    schema = json.loads(runner.invoke(app, ["config", "schema"]).output)
    assert set(schema["properties"]) == set(PipelineConfig.model_fields)
    recovery = schema["$defs"]["RecoveryConfig"]["properties"]["recover_within_steps"]
    assert recovery["minimum"] == 1 and recovery["description"]
    assert schema["$defs"]["FunnelsConfig"]["additionalProperties"] is False


def test_cli_init_writes_the_packaged_default_with_its_comments(tmp_path):
    runner = CliRunner()
    target = tmp_path / "mine" / "nightly.yaml"
    made = runner.invoke(app, ["config", "init", str(target)])
    assert made.exit_code == 0, made.output
    assert target.read_bytes() == DEFAULT_CONFIG_PATH.read_bytes()
    assert target.read_text().startswith("# golden-distill pipeline configuration")
    # never overwrites an edited file without --force
    target.write_text("funnels: {}\n")
    again = runner.invoke(app, ["config", "init", str(target)])
    assert again.exit_code == 2 and "--force" in again.output
    assert target.read_text() == "funnels: {}\n"
    forced = runner.invoke(
        app, ["config", "init", str(target), "--force", "--name", "tau-bench.yaml"]
    )
    assert forced.exit_code == 0 and "tau-bench.yaml" in forced.output
    assert runner.invoke(app, ["config", "validate", str(target)]).exit_code == 0
    unknown = runner.invoke(app, ["config", "init", str(tmp_path / "x.yaml"), "--name", "nosuch"])
    assert unknown.exit_code == 2 and "nightly.yaml" in unknown.output
    listed = runner.invoke(app, ["config", "init", "--list"])
    assert {"nightly.yaml", "tau-bench.yaml"} <= set(listed.output.split())


def test_cli_validate_without_a_path_checks_the_packaged_default():
    result = CliRunner().invoke(app, ["config", "validate"])
    assert result.exit_code == 0, result.output
    assert f"{DEFAULT_CONFIG_PATH}: valid" in result.output
