"""Flow parameters and the `run:` config section: checked before any work starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from golden_distill.datasets.config_model import ConfigError
from golden_distill.flows.params import DistillParams
from golden_distill.flows.run_config import FlowConfig


def test_time_window_must_be_ordered_and_is_utc():
    p = DistillParams(sources=["x"], since="2026-11-28T00:00:00", until="2026-11-29T00:00:00")
    assert p.since is not None and p.since.utcoffset().total_seconds() == 0
    with pytest.raises(ValidationError, match="since"):
        DistillParams(sources=["x"], since="2026-11-29", until="2026-11-28")


def test_bad_set_name_and_unknown_parameter_are_rejected():
    with pytest.raises(ValidationError, match="set name"):
        DistillParams(sources=["x"], set_name="../escape")
    with pytest.raises(ValidationError):
        DistillParams(sources=["x"], sorces=["typo"])


def test_resolve_fills_from_config_and_overrides(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "run:\n  sources: [from-config]\n  work_dir: w1\n"
        "publish:\n  store_url: ./s1\n  set_name: cfgset\n"
    )
    resolved = DistillParams(config_path=str(cfg)).resolve()
    assert resolved.sources == ["from-config"]
    assert (resolved.store_url, resolved.set_name) == ("./s1", "cfgset")
    resolved = DistillParams(
        config_path=str(cfg),
        sources=["mine"],
        store_url="s2",
        set_name="other",
        dask_address="tcp://127.0.0.1:1",
        work_dir=str(tmp_path / "w2"),
    ).resolve()
    assert resolved.sources == ["mine"] and resolved.set_name == "other"
    assert resolved.config.run.task_runner == "dask"
    assert resolved.work_dir == tmp_path / "w2" / "sets" / "other"  # one folder per set


def test_resolve_without_any_source_fails(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("run: {}\n")
    with pytest.raises(ValueError, match="no sources"):
        DistillParams(config_path=str(cfg)).resolve()


def test_config_typo_is_reported_with_a_suggestion(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("run:\n  max_paralel_shards: 3\n")
    with pytest.raises(ConfigError, match="did you mean max_parallel_shards"):
        DistillParams(config_path=str(cfg), sources=["x"]).resolve()


def test_dask_address_implies_the_dask_runner_and_results_dir_is_a_path(tmp_path: Path):
    run = FlowConfig(dask_address="tcp://10.0.0.5:8786", work_dir=tmp_path)
    assert run.task_runner == "dask"
    assert isinstance(run.results_dir(), Path)
    assert run.results_dir() == (tmp_path / "prefect-results").resolve()


def test_configuration_reference_covers_every_section():
    from golden_distill.flows.config import PipelineConfig
    from golden_distill.flows.config_reference import render

    text = render()
    for section in PipelineConfig.model_fields:
        assert f"## `{section}:`" in text
    assert "`run.task_runner`" in text and "`run.dask_address`" in text


def test_a_url_work_folder_has_no_path_and_the_message_masks_its_credentials():
    from golden_distill.flows.errors import describe
    from golden_distill.flows.params import RunParamsError

    resolved = DistillParams(
        sources=["x"], work_dir="s3://planted-user:planted-secret@bucket/work"
    ).resolve()
    with pytest.raises(RunParamsError) as info:
        resolved.work_dir  # noqa: B018 - the property is what raises
    shown = describe(info.value)  # what a run would print: the message whole (ours)
    assert "is a URL, not a path" in shown and "s3://***@bucket/work" in shown
    assert "planted-user" not in shown and "planted-secret" not in shown
