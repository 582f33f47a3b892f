"""The `nightly` deployment in prefect.yaml, checked without a server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from prefect.client.schemas.schedules import CronSchedule
from prefect.flows import load_flow_from_entrypoint
from prefect.utilities.templating import apply_values

from golden_distill.flows.flow_limits import FlowLimitsError, flow_limits
from golden_distill.flows.params import DistillParams

REPO = Path(__file__).resolve().parents[2]


def _nightly() -> dict:
    spec = yaml.safe_load((REPO / "prefect.yaml").read_text())
    (deployment,) = [d for d in spec["deployments"] if d["name"] == "nightly"]
    return deployment


def test_entrypoint_loads_the_distill_flow_and_accepts_the_declared_parameters(monkeypatch):
    deployment = _nightly()
    # a module path, which process and Dask workers import from the installed package
    assert not deployment["entrypoint"].split(":")[0].endswith(".py")
    flow = load_flow_from_entrypoint(deployment["entrypoint"], use_placeholder_flow=False)
    assert flow.name == "distill"
    monkeypatch.setenv("GOLDEN_DATA_DIR", "/home/op/golden-data")
    parameters = apply_values(deployment["parameters"], {}, remove_notset=False)  # as deploy
    assert parameters["store_url"] == "/home/op/golden-data/store"
    validated = flow.validate_parameters(parameters)
    assert validated["sources"] and validated["set_name"] == "nightly"
    assert "{date}" in validated["sources"][0]  # each night reads its own partition
    # flat parameters: a backfill sets one field, and the values are typed by the flow
    backfill = flow.validate_parameters({**deployment["parameters"], "since": "2026-11-20"})
    assert backfill["since"].replace(tzinfo=None) == datetime(2026, 11, 20)  # UTC if naive
    # the declared config file exists and is valid (relative to the working directory)
    config_path = REPO / validated["config"]
    assert config_path.is_file()
    flat = {k: v for k, v in validated.items() if k != "config"}
    DistillParams(**flat, config_path=str(config_path)).resolve()


def test_schedule_is_a_valid_nightly_cron_in_utc():
    (schedule,) = _nightly()["schedules"]
    cron = CronSchedule(cron=schedule["cron"], timezone=schedule["timezone"])
    assert cron.timezone == "UTC"
    start = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    from cronsim import CronSim  # what Prefect's scheduler uses

    nxt = next(CronSim(cron.cron, start))
    assert (nxt.hour, nxt.minute) == (2, 30)
    assert (nxt - start).total_seconds() < 24 * 3600


def test_deployment_names_a_work_pool_and_no_secret():
    deployment = _nightly()
    assert deployment["work_pool"]["name"]
    text = (REPO / "prefect.yaml").read_text()
    assert "GOLDEN_PSEUDONYM_KEY=" not in text


def test_one_run_at_a_time_later_runs_wait():
    """Two runs of the deployment never overlap: the second is queued (and the set's lock
    guards the set against other writers: tests/flows/test_concurrent_runs.py)."""
    from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy

    limit = ConcurrencyLimitConfig(**_nightly()["concurrency_limit"])
    assert limit.limit == 1
    assert limit.collision_strategy == ConcurrencyLimitStrategy.ENQUEUE


def test_a_placeholder_left_unfilled_at_deploy_time_fails_validation_naming_it():
    store = _nightly()["parameters"]["store_url"]
    assert "{{ $GOLDEN_DATA_DIR }}" in store  # no default path under /var/lib
    with pytest.raises(ValueError, match="unfilled placeholder"):
        DistillParams(store_url=store, sources=["x"])


def test_the_deployment_sets_a_timeout_and_retries_that_the_flow_reads():
    env = _nightly()["work_pool"]["job_variables"]["env"]
    limits = flow_limits(env)
    assert limits.retries >= 1 and limits.retry_delay_seconds > 0
    # whole seconds: Prefect's run policy holds an int (a float logs a serializer warning)
    assert isinstance(limits.retry_delay_seconds, int)
    with pytest.raises(FlowLimitsError, match="GOLDEN_FLOW_RETRY_DELAY"):
        flow_limits({"GOLDEN_FLOW_RETRY_DELAY_SECONDS": "0.5"})
    assert limits.timeout_seconds and limits.timeout_seconds <= 24 * 3600
    # a run by hand: a timeout by default, no retries
    assert flow_limits({}).timeout_seconds and flow_limits({}).retries == 0
    assert flow_limits({"GOLDEN_FLOW_TIMEOUT_SECONDS": "0"}).timeout_seconds is None
    with pytest.raises(FlowLimitsError, match="GOLDEN_FLOW_RETRIES"):
        flow_limits({"GOLDEN_FLOW_RETRIES": "1.5"})
    with pytest.raises(FlowLimitsError, match="not a number"):
        flow_limits({"GOLDEN_FLOW_TIMEOUT_SECONDS": "six hours"})


def test_golden_run_refuses_a_bad_limit_before_any_work(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    monkeypatch.setenv("GOLDEN_FLOW_RETRIES", "twice")
    args = ["run", "--source", str(tmp_path), "--store", str(tmp_path / "s"), "--set", "x"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "stage 'validate': GOLDEN_FLOW_RETRIES='twice': not a number" in result.output
    assert not (tmp_path / "s").exists()
