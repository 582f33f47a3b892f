"""How the nightly flow runs (section `run:`): task runner, parallelism, work and cache folders.

These settings change *how* a run executes, never *what* it selects, so they are left out of the
cache key (a run on Dask reuses shard results computed by a local run and vice versa).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from golden_distill.datasets.config_model import StrictModel

TaskRunnerName = Literal["thread", "process", "dask"]


def is_url(location: str | Path) -> bool:
    """True for ``s3://...``-style locations (a ``file://`` URL is a local path)."""
    text = str(location)
    return "://" in text and not text.startswith("file://")


class FlowConfig(StrictModel):
    sources: list[str] = Field(
        default_factory=list,
        description="Recording files, folders or glob patterns read when a run names none "
        "(`golden run --source` and the deployment's `sources` parameter take precedence).",
    )
    task_runner: TaskRunnerName = Field(
        "thread",
        description="Where per-shard tasks run: `thread` (a thread pool in the flow's process; "
        "the default, nothing to set up), `process` (a local process pool: true parallelism "
        "for CPU-heavy redaction), or `dask` (a Dask cluster: `dask_address`, or a private "
        "LocalCluster of `dask_workers` processes when no address is given).",
    )
    dask_address: str | None = Field(
        None,
        description="Scheduler address of a running Dask cluster (e.g. tcp://10.0.0.5:8786). "
        "Setting it implies task_runner: dask. `golden run --dask-address` overrides it.",
    )
    dask_workers: int = Field(
        2, ge=1, description="Workers of the private LocalCluster used when no address is given."
    )
    max_parallel_shards: int = Field(
        2,
        ge=1,
        description="Shards processed at once by the thread or process runner (one shard holds "
        "up to `ingest.rows_per_shard` cases in memory per worker).",
    )
    work_dir: Path | str = Field(
        Path(".golden-work"),
        description="Folder for per-shard intermediate files kept for cached reruns: funnel "
        "candidates (not yet redacted), decisions, signatures, redacted cases and quarantine "
        "files (which may keep raw source lines). Give it the access class of the sources. "
        "Each set's runs use their own folder inside it, `<work_dir>/sets/<set>/`, so sets "
        "sharing one work_dir never prune each other's files. "
        "A local folder (relative paths are relative to the current directory), or an fsspec "
        "URL such as s3://bucket/golden-work so Dask workers on other machines share it "
        "(credentials from the environment; the bucket must be private and encrypted: see "
        "docs/operating.md).",
    )
    result_storage: Path | None = Field(
        None,
        description="Folder where Prefect persists cached shard results (default: "
        "`<work_dir>/prefect-results`, on the work folder's storage). Always a path, never a "
        "Prefect block name.",
    )
    cache_shards: bool = Field(
        True,
        description="Reuse a shard's results when its content, the config, the pipeline "
        "version (and, for redaction, the chosen cases and the key id) are unchanged. Turn off "
        "to force every shard to be redone.",
    )
    prune_work_dir: bool = Field(
        True,
        description="After a successful run, delete shard folders and cached results that this "
        "run did not use (other inputs, configs or code versions), inside the set's own work "
        "folder only (`<work_dir>/sets/<set>/`).",
    )
    set_lock_wait_seconds: float = Field(
        900.0,
        ge=0,
        description="How long a run waits for another writer of the same set (a run or `golden "
        "erase`) to finish before it fails with a message naming the holder. One writer per set "
        "at a time: the set's lock (`<store>/<set>/_lock`) is held from before the head and the "
        "watermark are read until the version is published.",
    )
    storage_retries: int = Field(
        3, ge=0, description="Retries of tasks that touch storage or databases (read, publish)."
    )
    retry_backoff_seconds: float = Field(
        2.0,
        ge=0,
        description="First retry delay; each next retry waits twice as long (exponential backoff).",
    )

    @field_validator("work_dir", mode="before")
    @classmethod
    def _path_or_url(cls, value: object) -> object:
        """A URL (s3://...) stays a string; anything else is a local path."""
        if isinstance(value, str) and not is_url(value):
            return Path(value.removeprefix("file://"))
        return value

    @model_validator(mode="after")
    def _address_implies_dask(self) -> FlowConfig:
        if self.dask_address and self.task_runner != "dask":
            object.__setattr__(self, "task_runner", "dask")
        return self

    @property
    def remote_work(self) -> bool:
        """The work folder is an fsspec URL (shared by workers on other machines)."""
        return is_url(self.work_dir)

    def work_location(self) -> str:
        """The work folder as an absolute local path or a URL."""
        if self.remote_work:
            return str(self.work_dir).rstrip("/")
        return str(Path(self.work_dir).resolve())

    def results_dir(self) -> Path:
        """The result storage folder of a local work folder, resolved (a ``Path``: Prefect reads
        a ``str`` as a block)."""
        if self.result_storage is None and self.remote_work:
            raise ValueError("results_dir: the work folder is a URL; use results_location()")
        return (self.result_storage or Path(self.work_dir) / "prefect-results").resolve()

    def results_location(self) -> str:
        """Where Prefect's cached results are: a local path, or ``<work URL>/prefect-results``."""
        if self.result_storage is None and self.remote_work:
            return f"{self.work_location()}/prefect-results"
        return str(self.results_dir())
