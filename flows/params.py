"""The nightly flow's parameters: one pydantic model, validated before any work starts.

Prefect validates the model's types when a run is created (from the CLI, a deployment or the UI);
``resolve()`` then loads the config file and checks the sources exist, still before any task runs,
so a typo in a config key or a missing input fails the run in the `validate` stage in seconds.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from golden_distill.datasets.store.layout import LayoutError, check_set_name
from golden_distill.flows.run_config import is_url

if TYPE_CHECKING:  # loaded by the methods that need them: `golden --help` imports this module
    from golden_distill.flows.config import PipelineConfig
    from golden_distill.flows.work_folder import WorkFolder


class RunParamsError(ValueError):
    """The parameters do not make a run (no source, a work folder that cannot hold files). Its
    message names the setting and quotes no record data, so the run report shows it whole
    (``flows.errors.describe`` withholds the messages of errors from elsewhere)."""


class DistillParams(BaseModel):
    """Everything one run of `distill` needs; config values fill what is not given here.

    The one declaration of a run's parameters: the `distill` flow's signature (so the
    deployment's parameter schema) and the `golden run` options are derived from these fields
    (``flow_signature`` here, ``flows/cli/run_options.py``), so a new parameter is one field."""

    model_config = ConfigDict(extra="forbid")

    config_path: str | None = Field(
        None,
        description="Pipeline YAML config (default: the shipped configs/nightly.yaml).",
        # the flow (and so the deployment, prefect.yaml) names it `config`
        validation_alias=AliasChoices("config_path", "config"),
        serialization_alias="config",
    )
    sources: list[str] = Field(
        default_factory=list,
        description="Recording files, folders (every recording file inside) or glob patterns; "
        "database URLs (sqlite:///..., postgresql://...) for evidence tables. Empty: the "
        "config's run.sources.",
    )
    source_format: str | None = Field(
        None,
        description="Force one input format (native|chronicle|tau2|chat|evidence|otel); "
        "default: sniffed.",
    )
    since: datetime | None = Field(
        None, description="Keep only runs recorded at or after this instant (UTC if naive)."
    )
    until: datetime | None = Field(
        None, description="Keep only runs recorded before this instant (UTC if naive)."
    )
    store_url: str | None = Field(
        None,
        description="Golden store: a folder or fsspec URL (default: config publish.store_url).",
    )
    set_name: str | None = Field(
        None,
        description="Golden set to publish a version of (default: config publish.set_name).",
    )
    dask_address: str | None = Field(
        None,
        description="Run shard tasks on this Dask scheduler (overrides config run.dask_address).",
    )
    work_dir: str | None = Field(
        None,
        description="Folder or fsspec URL (s3://bucket/work) for intermediate shard files "
        "(overrides config run.work_dir).",
    )
    force: bool = Field(
        False, description="Publish even when the content equals the latest version's."
    )
    rebuild: bool = Field(
        False,
        description="Recompute the set from the sources alone, ignoring the previous version's "
        "cases (default: grow it incrementally) and the store's watermark.",
    )
    new_key: bool = Field(
        False,
        description="Publish with a pseudonym key other than the set's latest version's: starts "
        "a new lineage (built from the sources alone, never grown from versions keyed "
        "otherwise). Without it such a run is refused.",
    )
    by_mtime: bool = Field(
        False,
        description="Also pick input files by modification time: only files modified inside the "
        "window are read (for sources that are neither date-partitioned nor ordered).",
    )

    @field_validator("since", "until")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    @field_validator("set_name")
    @classmethod
    def _set_name(cls, value: str | None) -> str | None:
        # The store's own rule (a full match), so a bad name fails before any work.
        if value is not None:
            try:
                check_set_name(value)
            except LayoutError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("sources")
    @classmethod
    def _no_blank_sources(cls, value: list[str]) -> list[str]:
        if any(not s.strip() for s in value):
            raise ValueError("a source is empty")
        return value

    @field_validator("config_path", "sources", "store_url", "work_dir")
    @classmethod
    def _no_placeholder(cls, value: str | list[str] | None) -> str | list[str] | None:
        # A `{{ $VAR }}` of prefect.yaml whose variable was not set at `prefect deploy` time.
        for text in [value] if isinstance(value, str) else value or []:
            if "{{" in text:
                raise ValueError(
                    f"{text!r} holds an unfilled placeholder: export the variable it names "
                    "and run `prefect deploy` again (or pass the value with the run)"
                )
        return value

    @model_validator(mode="after")
    def _window(self) -> DistillParams:
        if self.since and self.until and self.since >= self.until:
            raise ValueError("time window: `since` must be before `until`")
        return self

    def flow_parameters(self) -> dict[str, object]:
        """The `distill` flow's flat parameters for these values (only the ones given)."""
        return self.model_dump(exclude_defaults=True, by_alias=True)

    @classmethod
    def from_flow(cls, values: Mapping[str, Any]) -> DistillParams:
        """The parameters of a flow call (named as in ``flow_signature``); None: not given."""
        return cls.model_validate({k: v for k, v in values.items() if v is not None})

    def resolve(self) -> ResolvedRun:
        """Load the config and fill defaults: everything a run needs, checked, before any task."""
        from golden_distill.flows.config import load_pipeline_config

        config = load_pipeline_config(self.config_path)
        run = config.run
        set_name = self.set_name or config.publish.set_name
        updates: dict[str, object] = {}
        if self.dask_address:
            updates.update(dask_address=self.dask_address, task_runner="dask")
        work_dir: Path | str = run.work_dir
        if self.work_dir:
            work_dir = self.work_dir if is_url(self.work_dir) else Path(self.work_dir)
        updates.update(set_folders(work_dir, run.result_storage, set_name))
        run = run.model_copy(update=updates)
        config = config.model_copy(update={"run": run})
        sources = list(self.sources) or list(config.run.sources)
        if not sources:
            raise RunParamsError("no sources: pass --source (or `sources`), or set run.sources")
        store = self.store_url or config.publish.store_url
        return ResolvedRun(
            params=self,
            config=config,
            sources=sources,
            store_url=str(store),
            set_name=set_name,
            since=self.since,
            until=self.until,
        )


def optional(field: FieldInfo) -> tuple[Any, Any]:
    """A field's annotation and default for a caller that may leave it out: a field whose
    default is built (a list) is ``None`` there, and None means "not given"."""
    if field.default_factory is not None:
        return field.annotation | None, None
    return field.annotation, field.default


def flow_signature() -> inspect.Signature:
    """The `distill` flow's keyword parameters: one per field, named by its alias. Prefect
    builds the deployment's parameter schema and validates runs from ``inspect.signature``."""
    parameters = []
    for name, field in DistillParams.model_fields.items():
        annotation, default = optional(field)
        parameters.append(
            inspect.Parameter(
                field.serialization_alias or name,
                inspect.Parameter.KEYWORD_ONLY,  # the flow takes them as `**parameters`
                default=default,
                annotation=annotation,
            )
        )
    return inspect.Signature(parameters, return_annotation=str)


F = TypeVar("F", bound=Callable[..., Any])


def takes_run_params(fn: F) -> F:
    """Give ``fn(**values)`` the flow signature of ``DistillParams`` (put it under ``@flow``)."""
    signature = flow_signature()
    fn.__signature__ = signature  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    fn.__annotations__["return"] = signature.return_annotation
    return fn


#: A run's work folder is ``<run.work_dir>/sets/<set name>``: see ``set_folders``.
SETS_FOLDER = "sets"


def set_folders(
    work_dir: Path | str, result_storage: Path | None, set_name: str
) -> dict[str, object]:
    """The work folder and result storage of one set's runs, inside the configured ones.

    Why: a run prunes what it did not use from its work folder, so two sets sharing one folder
    would delete each other's cache and in-flight files; one run per set holds the set's lock,
    so a folder per set is only ever one run's."""
    if is_url(work_dir):
        folder: Path | str = f"{str(work_dir).rstrip('/')}/{SETS_FOLDER}/{set_name}"
    else:
        folder = Path(work_dir) / SETS_FOLDER / set_name
    out: dict[str, object] = {"work_dir": folder}
    if result_storage is not None:
        out["result_storage"] = Path(result_storage) / set_name
    return out


@dataclass(frozen=True)
class ResolvedRun:
    """A run's parameters with the config's defaults filled in and its window fixed (given, or
    taken from the schedule and the store's watermark: see flows/window.py)."""

    params: DistillParams
    config: PipelineConfig
    sources: list[str]
    store_url: str
    set_name: str
    since: datetime | None = None
    until: datetime | None = None
    #: ``(version,)``: the set's head when this run took the set's lock (None: a new set); the
    #: publish commits only while ``latest`` is still there (compare-and-swap). None: unchecked.
    expected_head: tuple[str | None] | None = None

    @property
    def window(self) -> tuple[str | None, str | None]:
        """The window as ISO-8601 strings (what cache keys and manifests record)."""
        return (
            self.since.isoformat() if self.since else None,
            self.until.isoformat() if self.until else None,
        )

    @property
    def work_dir(self) -> Path:
        """The local work folder (a URL work folder has none: use ``work``)."""
        if self.config.run.remote_work:
            from golden_distill.datasets.sources.uris import display_uri

            shown = display_uri(str(self.config.run.work_dir))  # the message is shown whole
            raise RunParamsError(f"the work folder {shown} is a URL, not a path")
        return Path(self.config.run.work_dir).resolve()

    @property
    def work(self) -> WorkFolder:
        """The run's work folder, local or behind an fsspec URL (flows/work_folder.py)."""
        from golden_distill.flows.work_folder import work_folder

        return work_folder(self.config)
