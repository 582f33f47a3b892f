"""The `nightly` deployment in prefect.yaml, checked without a server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml
from prefect.client.schemas.schedules import CronSchedule
from prefect.flows import load_flow_from_entrypoint

from golden_distill.flows.params import DistillParams

REPO = Path(__file__).resolve().parents[2]


def _nightly() -> dict:
    spec = yaml.safe_load((REPO / "prefect.yaml").read_text())
    (deployment,) = [d for d in spec["deployments"] if d["name"] == "nightly"]
    return deployment


def test_entrypoint_loads_the_distill_flow_and_accepts_the_declared_parameters():
    deployment = _nightly()
    path, name = deployment["entrypoint"].split(":")
    flow = load_flow_from_entrypoint(f"{REPO / path}:{name}", use_placeholder_flow=False)
    assert flow.name == "distill"
    validated = flow.validate_parameters(deployment["parameters"])
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
