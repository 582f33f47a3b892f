"""A run's parameters are declared once (``DistillParams``): the `distill` flow's signature, the
deployment's parameter schema and the `golden run` options are derived from its fields."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime

import typer
from prefect.utilities.callables import parameter_schema
from typer.testing import CliRunner

from golden_distill.flows.cli import app
from golden_distill.flows.cli import run as run_cli
from golden_distill.flows.distill import distill
from golden_distill.flows.errors import StageError
from golden_distill.flows.params import DistillParams

FIELDS = DistillParams.model_fields
#: The flow's (and the deployment's) name of each field.
FLOW_NAMES = {name: field.serialization_alias or name for name, field in FIELDS.items()}
#: The options of `golden run` that are not run parameters.
CLI_ONLY = {"local", "verbose", "help"}


def _run_command_options() -> dict[str, list[str]]:
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    return {p.name: [*p.opts, *p.secondary_opts] for p in command.params}


def test_every_field_is_a_flow_parameter_and_nothing_else():
    signature = inspect.signature(distill)
    assert set(signature.parameters) == set(FLOW_NAMES.values())
    assert FLOW_NAMES["config_path"] == "config"  # the name prefect.yaml uses
    for name, field in FIELDS.items():
        default = signature.parameters[FLOW_NAMES[name]].default
        assert default == (None if field.default_factory else field.default), name
    # the deployment's schema (what `prefect deployment run -p` and the UI validate against)
    schema = parameter_schema(distill).model_dump()
    assert set(schema["properties"]) == set(FLOW_NAMES.values())
    assert schema["properties"]["since"]["anyOf"][0]["format"] == "date-time"
    assert schema["properties"]["force"]["type"] == "boolean"


def test_flow_parameters_round_trip_through_prefect_validation():
    params = DistillParams(
        config_path="configs/nightly.yaml",
        sources=["recordings/"],
        source_format="native",
        since="2026-11-20",
        set_name="nightly",
        new_key=True,
    )
    validated = distill.validate_parameters(params.flow_parameters())
    assert DistillParams.from_flow(validated) == params
    # as `prefect deployment run -p since=...` sends it: strings, typed by the flow
    backfill = distill.validate_parameters({"since": "2026-11-20", "force": "true"})
    assert backfill["force"] is True
    assert DistillParams.from_flow(backfill).since == datetime(2026, 11, 20, tzinfo=UTC)


def test_every_field_is_a_golden_run_option_with_its_description_as_help():
    options = _run_command_options()
    assert set(options) - CLI_ONLY == set(FIELDS)
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    helps = {p.name: p.help for p in command.params}
    for name, field in FIELDS.items():
        assert helps[name] == field.description, name
    # the flags the docs and scripts use
    assert options["config_path"] == ["--config", "-c"]
    assert options["sources"] == ["--source", "-s"]
    assert options["source_format"] == ["--format"]
    assert options["store_url"] == ["--store"]
    assert options["set_name"] == ["--set"]
    assert options["work_dir"] == ["--work-dir"]
    assert options["by_mtime"] == ["--by-mtime"]
    assert options["new_key"] == ["--new-key"]
    assert options["verbose"] == ["--verbose", "-v"]


def test_golden_run_hands_every_option_to_the_run(monkeypatch):
    seen = {}

    def execute(params, *, verbose=False, local=False):
        seen.update(params=params, verbose=verbose, local=local)
        return StageError("discover", "stopped before the run")

    monkeypatch.setattr(run_cli, "execute", execute)
    args = [
        "run", "-c", "my.yaml", "-s", "a/", "-s", "b/", "--format", "chat",
        "--since", "2026-11-20", "--until", "2026-11-21", "--store", "st", "--set", "s1",
        "--dask-address", "tcp://d:8786", "--work-dir", "w", "--force", "--rebuild",
        "--new-key", "--by-mtime", "--local", "-v",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and "stopped before the run" in result.output
    assert seen["local"] is True and seen["verbose"] is True
    assert seen["params"] == DistillParams(
        config_path="my.yaml",
        sources=["a/", "b/"],
        source_format="chat",
        since=datetime(2026, 11, 20, tzinfo=UTC),
        until=datetime(2026, 11, 21, tzinfo=UTC),
        store_url="st",
        set_name="s1",
        dask_address="tcp://d:8786",
        work_dir="w",
        force=True,
        rebuild=True,
        new_key=True,
        by_mtime=True,
    )
    # nothing given: the defaults, every one
    CliRunner().invoke(app, ["run"])
    assert seen["params"] == DistillParams() and seen["local"] is False
